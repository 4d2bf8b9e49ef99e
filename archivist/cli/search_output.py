"""How ``archivist search`` prints its results: a compact list, one line of snippet each,
then where the page lies among all results; and the searches of earlier versions. And how every
command that reads the archive tells that it is still being built (``tell_building``, ``with_building``)."""

from __future__ import annotations

import re
from typing import Any

import click

from archivist.archive import building
from archivist.cli.output import plural
from archivist.queries.newest import empty_hint
from archivist.queries.totals import MATCHED_WORDS, matched_counts

_MARK_RE = re.compile(r"<mark>(.*?)</mark>", re.S)


def print_conversations(rows: list[dict[str, Any]]) -> None:
    for number, row in enumerate(rows, start=1):
        facts = " · ".join(str(v) for v in (row["type"], row["date"]) if v)
        click.echo(click.style(f"{number}. {row['conversation']}", bold=True) + (f"  [{facts}]" if facts else ""))
        click.echo(f"   {row['path']}")
        excerpt = " ".join((row.get("excerpt") or "").split())
        click.echo("   " + _MARK_RE.sub(lambda m: click.style(m[1], fg="yellow", bold=True), excerpt))


def print_reports(rows: list[dict[str, Any]]) -> None:
    for number, row in enumerate(rows, start=1):
        when = (row["date"] or "undated")[:10]
        click.echo(
            click.style(f"{number}. {row['report_name']}", bold=True)
            + f"  [{row['command_name']} · {when} · {row['match_count']} matches]"
        )
        click.echo(f"   {row['excerpt']}")
        click.echo(f"   {row['link']}")


SNIPPET_WIDTH = 160  # characters of a result's one-line snippet
TITLE_WIDTH = 100  # and of its title (a memory's title is its text)


def snippet_line(excerpt: str | None, width: int = SNIPPET_WIDTH) -> str:
    """An excerpt on one line of at most ``width`` characters, its ``<mark>`` words highlighted."""
    parts = _MARK_RE.split(" ".join((excerpt or "").split()))  # plain, marked, plain, marked, ...
    shown, left = [], width
    for index, part in enumerate(parts):
        cut = part[:left]
        if cut:
            shown.append(click.style(cut, fg="yellow", bold=True) if index % 2 else cut)
        left -= len(cut)
        if left <= 0 and (len(cut) < len(part) or any(parts[index + 1 :])):  # more text follows
            shown.append("…")
            break
    return "".join(shown)


def _agent(row: dict[str, Any]) -> str | None:
    """The agent of a conversation read from an agent log: its path starts with the log's kind."""
    kind, colon, _ = str(row.get("path") or "").partition(":")
    if not colon or row.get("kind") != "conversation":
        return None
    from archivist.agents import registry

    return kind if kind in registry.names() else None


def _score(value: Any) -> str | None:
    return f"score {value:.3g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def usage_facts(row: dict[str, Any]) -> list[str]:
    """A result's tokens and cost, where it carries them (a search sorted by tokens or cost)."""
    tokens, cost = row.get("tokens"), row.get("cost")
    facts = [f"{tokens:,} tokens"] if isinstance(tokens, int) and not isinstance(tokens, bool) else []
    return facts + ([f"${cost:,.4f}"] if isinstance(cost, (int, float)) and not isinstance(cost, bool) else [])


def print_search(response: dict[str, Any], newest: str | None = None) -> None:
    """The unified search's page as a compact list, then where the page lies among all results; none
    in a time range: where the newest session is (``newest``, the newest day with a message)."""
    results = response["results"]
    if not response["total"]:
        click.echo("No results.", err=True)
        if dated(response) and newest:
            click.echo(empty_hint(newest, "--start-date ") + ".", err=True)
        return
    for row in results:
        facts = [row["kind"], row.get("entity_type"), _agent(row), row.get("date"), _score(row.get("score"))]
        facts += [MATCHED_WORDS.get(row.get("matched") or "")]
        facts += usage_facts(row)
        title = " ".join(str(row.get("title") or row.get("path") or "").split())
        title = title if len(title) <= TITLE_WIDTH else title[: TITLE_WIDTH - 1] + "…"
        click.echo(
            click.style(f"{row['rank']}. {title}", bold=True)
            + f"  [{' · '.join(dict.fromkeys(str(fact) for fact in facts if fact))}]"
        )
        message = row.get("message") or {}
        text = snippet_line(message.get("snippet") or row.get("excerpt"))
        if text:
            click.echo(f"   {text}")
        where = f"   {row['path']} · id {row['id']}"
        click.echo(where + (f" · message #{message['index']}" if message.get("index") is not None else ""))
    page, pages, total = response["page"], response["total_pages"], response["total"]
    line = f"Page {page} of {pages} · {plural(total, 'result')}" + matched_counts(response.get("matched"))
    if response["has_more"]:
        line += f" · next: --page {page + 1}"
    elif not results:
        line += f" · the last page is {pages}"
    click.echo(line)
    tell_building(response.get("building"))


def dated(response: dict[str, Any]) -> bool:
    """Whether a search was within a time range."""
    filters = response.get("filters")
    return isinstance(filters, dict) and any(filters.get(name) for name in ("start_date", "end_date"))


def tell_building(told: dict[str, Any] | None, err: bool = False) -> None:
    """The line a command prints after its answer (on stderr with ``err``) while an index run is still
    storing agent logs, or after one that stopped (``archive.building``); nothing once the archive is built."""
    if told:
        click.echo(building.sentence(told), err=err)


def with_building(payload: dict[str, Any], told: dict[str, Any] | None) -> dict[str, Any]:
    """A command's JSON, with ``building`` in it while the archive is being built; left out once it is."""
    return {**payload, "building": told} if told else payload
