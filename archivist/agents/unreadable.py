"""Stores of agent sessions that Archivist cannot read, and why: each said in one sentence where
a person points Archivist at one (``--source NAME=PATH``) or ``--discover`` finds one.

The stores are listed in ``unreadable.toml`` beside this module (name, what they hold, why they
cannot be read, and their default locations, as a kind's ``[[locations]]``); docs/sources.md
tables them (``tests/test_agent_kinds.py``). None is a kind: no reader, no agent of the search.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from archivist.agents.hookspecs import NAME, SYSTEMS, Location

DECLARATION = Path(__file__).with_name("unreadable.toml")


@dataclass(frozen=True)
class Store:
    """A store of sessions that cannot be read: its name, what it holds, and why."""

    name: str  # as a kind would be named on the command line
    description: str  # what it holds: "Antigravity's conversations"
    why: str  # one sentence: why it cannot be read (what it is, and the evidence)
    locations: tuple[Location, ...] = ()

    def sentence(self, path: Path | None = None) -> str:
        """Its one sentence: what cannot be read (and where), and why."""
        where = f" at {path}" if path is not None else ""
        return f"{self.description}{where} cannot be read: {self.why}"


@functools.cache
def stores() -> dict[str, Store]:
    """The stores ``unreadable.toml`` lists, by name; ValueError naming the file for a malformed entry."""
    import tomllib

    with DECLARATION.open("rb") as file:
        table = tomllib.load(file)
    found: dict[str, Store] = {}
    for entry in table.get("stores", []):
        unknown = set(entry) - {"name", "description", "why", "locations"}
        if unknown or not all(isinstance(entry.get(key), str) and entry[key] for key in ("name", "description", "why")):
            raise ValueError(f"{DECLARATION.name}: a store has a name, a description and why ({entry.get('name')!r})")
        if not NAME.match(entry["name"]):
            raise ValueError(f"{DECLARATION.name}: a store is named as a kind is, not {entry['name']!r}")
        locations = tuple(
            Location(**{**place, "systems": tuple(place.get("systems", SYSTEMS))})
            for place in entry.get("locations", [])
        )
        found[entry["name"]] = Store(entry["name"], entry["description"], entry["why"], locations)
    return found


def found(environ: Mapping[str, str], home: Path, system: str) -> list[tuple[Store, Path]]:
    """The stores that are there, in their default locations on ``system``."""
    there: list[tuple[Store, Path]] = []
    for store in stores().values():
        for location in store.locations:
            if system in location.systems:
                there.extend((store, path) for path in location.paths(environ, home) if path.exists())
    return list(dict.fromkeys(there))
