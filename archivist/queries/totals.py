"""Totals as the surfaces say them: the ``usage`` query's rows summed (the totals line the CLI
prints and the page shows), and a search's total split by how its results matched."""

from __future__ import annotations

from typing import Any

# the ways the usage query groups responses: rules.USAGE_GROUPS, and each session
USAGE_BY = ("day", "month", "block", "model", "agent", "project", "session")
USAGE_SESSIONS = 50  # the sessions a page of usage by session holds, unless asked
# the token columns of a usage row, as the query names them
USAGE_TOKENS = ("input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens", "total_tokens")


def recorded(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The usage query's groups of responses: its rows but those of agents that record none."""
    return [row for row in rows if row.get("usage_recorded", 1)]


def unrecorded(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The agents with sessions in the range whose logs record no usage: the usage query's rows
    with usage_recorded 0, each with its agent and sessions."""
    return [row for row in rows if not row.get("usage_recorded", 1)]


def unrecorded_line(rows: list[dict[str, Any]]) -> str:
    """The agents that record no usage, as a line says them: "No usage recorded: cursor (2
    sessions), specstory (1 session)."; "" when there are none."""
    agents = [f"{row['agent']} ({row['sessions']:,} session{'s' if row['sessions'] != 1 else ''})" for row in rows]
    return f"No usage recorded: {', '.join(agents)}." if agents else ""


def usage_totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The tokens, the cost (null when no row was priced), the stated cost, the responses and
    the unpriced responses of ``rows``, summed (rows of agents that record no usage add nothing)."""
    rows = recorded(rows)
    totals: dict[str, Any] = {column: sum(row[column] for row in rows) for column in USAGE_TOKENS}
    for column in ("cost", "stated_cost"):
        known = [row[column] for row in rows if row[column] is not None]
        totals[column] = round(sum(known), 6) if known else None
    totals["responses"] = sum(row["responses"] for row in rows)
    totals["unpriced"] = sum(row["unpriced"] for row in rows)
    return totals


# how a result matched, as a list says it ("all" needs no word: it is what a search means)
MATCHED_WORDS = {"some": "some words", "meaning": "by meaning"}
_MATCHED_COUNTS = {"all": "with every word", "some": "with some", "meaning": "by meaning only"}


def matched_counts(matched: dict[str, int | None] | None) -> str:
    """A search's total split by how its results matched, where two kinds are counted:
    " (5 with every word, 8 with some)"; else ""."""
    counts = {key: count for key, count in (matched or {}).items() if count}
    if len(counts) < 2:
        return ""
    return " (" + ", ".join(f"{count:,} {_MATCHED_COUNTS[key]}" for key, count in counts.items()) + ")"
