"""``archivist search``: its options, made from the declarations of the searches it runs, the
/api/search parameters they make, and the searches of earlier versions (--conversations, --reports).

Each option is a declared parameter's (``Param.flags``): the unified search's, and those of
``search_workspace`` and ``search_reports`` that it lacks; an option that several of them
take (--type, --limit) is one option, which says what it means to each. Its help is the
parameter's description. The options are made when the command is first used (parsed or
helped), so that starting another command does not load the declarations.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from archivist.cli.arguments import DeclaredOption, db_option, workspace_argument
from archivist.cli.output import fail, info, plural, refuse
from archivist.cli.search_output import (
    print_conversations,
    print_reports,
    print_search,
    tell_building,
    with_building,
)
from archivist.cli.workspaces import archive_to_read, open_archive, workspace_folder
from archivist.errors import ArchivistError

if TYPE_CHECKING:
    from archivist.queries.params import Param

T = TypeVar("T")

# The searches it runs: the unified search, or one of earlier versions when its switch is given.
SEARCHES = {"": "search", "--conversations": "search_workspace", "--reports": "search_reports"}
AS_BOUNDS = "date_range"  # --date-range: the unified search's start_date and end_date at once
# What to try instead of an option that only a search of earlier versions takes.
INSTEAD = {"command_filter": "to search everything: --kind report --type COMMAND"}


@dataclass(frozen=True)
class Option:
    """One option of the command: the parameters it gives, each with its search's switch."""

    flags: tuple[str, ...]
    dest: str
    params: tuple[tuple[str, Param], ...]

    @property
    def param(self) -> Param:
        return self.params[0][1]

    def help(self) -> str:
        """What it means: to the unified search, then to each search of earlier versions that takes it."""
        parts: list[str] = []
        for switch, param in self.params:
            said = param.described("cli") if not parts else param.description
            if switch and param.name != AS_BOUNDS:
                said = f"With {switch}: {said}"
            parts.append(said)
        if self.dest == AS_BOUNDS:
            parts.append("Without --conversations: start_date and end_date at once.")
        return " ".join(parts)

    def click_option(self) -> click.Option:
        """The option, its values checked by the declared rules (as /api/search checks them); its help shows
        the unified search's choices and bounds as click shows a checked option's (its description says its
        default; without --mode, the command's own is keyword until the archive is embedded)."""
        many = any(param.many for _switch, param in self.params)
        flag = self.param.type == "boolean"
        default: Any = False if flag else () if many else None
        return DeclaredOption(
            [*self.flags, self.dest],
            declared=tuple(param for _switch, param in self.params),
            multiple=many,
            is_flag=flag,
            default=default,
            metavar=None if flag else self.metavar(),
            help=self.help() + self.bounds(),
        )

    def metavar(self) -> str | None:
        """The value it takes: the unified search's choices, as click shows a choice, or the declared name."""
        choices = self.param.choices
        return f"[{'|'.join(choices)}]" if choices and not self.param.many else self.param.metavar

    def bounds(self) -> str:
        """The unified search's bounds, as click shows a range's."""
        low, high = self.param.minimum, self.param.maximum
        return "" if low is None or high is None else f"  [{low:g}<=x<={high:g}]"


@functools.cache
def declared_options() -> list[Option]:
    """The options that the declared parameters make, in the order the unified search declares them."""
    from archivist.queries.declarations import QUERIES

    found: dict[str, Option] = {}
    for switch, name in SEARCHES.items():
        for param in QUERIES[name].params:
            if not param.option:
                continue
            known = found.get(param.flags[0])
            if known is None:
                found[param.flags[0]] = Option(param.flags, param.name, ((switch, param),))
            else:
                flags = tuple(dict.fromkeys(known.flags + param.flags))
                found[param.flags[0]] = Option(flags, known.dest, (*known.params, (switch, param)))
    return list(found.values())


class DeclaredSearch(click.Command):
    """A command whose declared options are added at its first use, before its own switches."""

    declared = False

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        if not self.declared:
            self.declared = True
            at = next(index for index, param in enumerate(self.params) if param.name == "conversations")
            self.params[at:at] = [option.click_option() for option in declared_options()]
        return super().get_params(ctx)


def listed(values: Any) -> str:
    """An option's value as /api/search takes it: a list option's uses comma-separated, True as true."""
    if isinstance(values, (list, tuple)):
        return ",".join(value for value in values if value.strip())
    return "true" if values is True else values or ""


def check_options(switch: str, given: dict[str, Any], options: list[Option]) -> None:
    """Refuse the options that the search chosen (by its ``switch``) does not take."""
    taken = {option.dest for option in options if any(own == switch for own, _param in option.params)}
    if not switch:
        taken.add(AS_BOUNDS)
    misplaced = [option for option in options if given.get(option.dest) and option.dest not in taken]
    if misplaced and switch:
        flags = ", ".join(option.flags[0] for option in misplaced)
        refuse(f"{switch} takes no {flags}: leave {switch} out to search everything.", "INVALID_PARAMETER")
    if misplaced:
        option = misplaced[0]
        instead = INSTEAD.get(option.dest)
        refuse(
            f"{option.flags[0]} goes with {option.params[0][0]}" + (f" ({instead})." if instead else "."),
            "INVALID_PARAMETER",
        )


def search_params(query: str, mode: str | None, db_path: Path, given: dict[str, Any]) -> dict[str, str]:
    """The unified search's parameters, as /api/search takes them; only those given."""
    if mode is None:
        from archivist.archive.schema import is_embedded
        from archivist.queries.rules import DEFAULT_MODE

        mode = "" if is_embedded(db_path) else "keyword"  # "": the search's own default
        info(
            "Mode: " + (DEFAULT_MODE if not mode else "keyword (the archive has no embeddings yet: `archivist embed`)")
        )
    options = {name: listed(value) for name, value in given.items()}
    date_range = options.pop(AS_BOUNDS, "")
    if date_range:
        if options.get("start_date") or options.get("end_date"):
            refuse(
                "--date-range sets both --start-date and --end-date: give --date-range, or the two bounds.",
                "INVALID_PARAMETER",
            )
        from archivist.queries import rules

        try:
            options["start_date"] = options["end_date"] = rules.date_range(date_range)
        except ArchivistError as error:
            fail(error)
    params = {"query": query, "mode": mode, **options}
    return {name: value for name, value in params.items() if value}


@click.command(cls=DeclaredSearch)
@workspace_argument
@click.argument("query", required=False, metavar="[QUERY]")
@db_option
@click.option(
    "--conversations",
    is_flag=True,
    help="Conversations only, as earlier versions searched (search_workspace): with --date-range, --type and --limit.",
)
@click.option("--reports", is_flag=True, help="Analysis reports only, by substring (search_reports).")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the JSON that GET /api/search returns for the same parameters "
    '(with --conversations or --reports: {"results": [...]}).',
)
def search(
    workspace: Path | None,
    query: str | None,
    db_path: Path | None,
    conversations: bool,
    reports: bool,
    as_json: bool,
    **given: Any,
) -> None:
    """Search everything in WORKSPACE's archive for QUERY: conversations, reports, memories, records and notes.

    It runs the search that GET /api/search and the MCP search tool run, with the same
    filters, and prints each result's title, kind, date, score, a snippet and the path and
    id to open it, then the page. Without --mode it ranks by hybrid once the archive is
    embedded, by keyword before. Without QUERY, --mode recent, tag or faceted list by the
    filters alone. --conversations and --reports run the searches of earlier versions.
    """
    workspace = workspace_folder(workspace, "search")
    switch = "--reports" if reports else "--conversations" if conversations else ""
    if query is None and (given["mode"] is None or switch):
        refuse(
            "No query given: run `archivist search WORKSPACE QUERY` "
            "(or list by filters alone: --mode recent, --mode faceted).",
            "INVALID_QUERY",
        )
    if conversations and reports:
        refuse("--conversations and --reports are two searches: give one of them.", "INVALID_PARAMETER")
    options = declared_options()
    check_options(switch, given, options)
    if given["output"] and not as_json:
        refuse(
            "--output chooses what --json prints: give --json too (the list printed is always whole).",
            "INVALID_PARAMETER",
        )
    db_path = archive_to_read(workspace, db_path, upgrade=False)
    if switch:
        earlier(db_path, SEARCHES[switch], query or "", given, options, as_json)
    else:
        unified(db_path, query or "", given, as_json)


def earlier(db_path: Path, name: str, query: str, given: dict[str, Any], options: list[Option], as_json: bool) -> None:
    """A search of earlier versions: its rows as a list, or as {"results": [...]}."""
    dest = {param.name: option.dest for option in options for own, param in option.params if SEARCHES[own] == name}
    params = {"query": query, **{name: listed(given[option]) for name, option in dest.items()}}
    rows, told = answer_told(db_path, lambda archive: archive.run(name, params))
    if as_json:
        click.echo(json.dumps(with_building({"results": rows}, told), indent=2, ensure_ascii=False))
        return
    if not rows:
        click.echo("No results.", err=True)
    else:
        (print_reports if name == "search_reports" else print_conversations)(rows)
    tell_building(told)


def unified(db_path: Path, query: str, given: dict[str, Any], as_json: bool) -> None:
    """The unified search: its page as a list, or the JSON of /api/search (brief unless --output full)."""
    from archivist.queries.rules import API_OUTPUT

    filters = {name: value for name, value in given.items() if name not in ("mode", "output")}
    params = search_params(query, given["mode"], db_path, filters)
    params["output"] = (given["output"] or API_OUTPUT) if as_json else "full"  # the list printed shows paths
    info(f"Searching {db_path}: " + " ".join(f"{name}={value!r}" for name, value in params.items()))
    started = time.perf_counter()
    response = answer(db_path, lambda archive: archive.search(params))
    info(f"{plural(response['total'], 'result')} in {time.perf_counter() - started:.2f}s")
    if as_json:
        click.echo(json.dumps(response, indent=2, ensure_ascii=False))
    else:
        from archivist.queries.newest import newest_day

        print_search(response, newest_day(db_path) if not response["total"] else None)


def answer(db_path: Path, ask: Callable[[Any], T]) -> T:
    """What ``ask`` gets from the archive's canned queries; an ArchivistError is the command's one-line error."""
    return _asked(db_path, ask, told=False)[0]


def answer_told(db_path: Path, ask: Callable[[Any], T]) -> tuple[T, dict[str, Any] | None]:
    """``answer``, and what the archive tells of an index run still storing agent logs (``archive.building``)."""
    return _asked(db_path, ask, told=True)


def _asked(db_path: Path, ask: Callable[[Any], T], told: bool) -> tuple[T, dict[str, Any] | None]:
    archive = open_archive(db_path)
    try:
        return ask(archive), archive.building() if told else None
    except ArchivistError as error:
        fail(error)
    finally:
        archive.close()
