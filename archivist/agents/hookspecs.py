"""The hook through which a kind of agent log registers itself, and what it registers.

The kinds built in are the ``kind.toml`` files of ``archivist/agents/<kind>/``
(``Kind.from_table``), which ``archivist.agents.kinds`` registers. A plugin from an installed
package (a setuptools entry point of the group ``archivist``) implements the hook::

    from archivist.agents.hookspecs import Kind, Location, hookimpl

    @hookimpl
    def register_agent_kinds(register):
        register(Kind("my-agent", "my_package.reader", "My agent's sessions", ...))

``archivist.agents.registry`` asks every plugin, and every list of kinds comes from there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pluggy

PROJECT = "archivist"  # the name of the hooks' project, and the entry-point group of the plugins
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)

SYSTEMS = ("linux", "macos", "windows")  # "linux" stands for every Unix but macOS
RESERVED = ("workspace",)  # an agent name of the search already: the workspace's own conversations
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")  # what a kind may be called
_MODULE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*\Z")


@dataclass(frozen=True)
class Location:
    """Where a kind keeps its logs by default: ``under`` in ``folder``, on the ``systems`` named,
    unless the environment variable ``env`` names another folder for them."""

    folder: str  # "~/.claude": "~" is the home folder, "/" separates folders on every system
    under: str = ""  # the logs in that folder: "projects" (a folder) or "logs.db" (a file)
    env: str = ""  # the variable that moves ``folder``: "CLAUDE_CONFIG_DIR"
    systems: tuple[str, ...] = SYSTEMS
    several: bool = False  # ``env`` may name several folders, separated by commas

    def __post_init__(self) -> None:
        if not (self.folder == "~" or self.folder.startswith(("~/", "/"))):
            raise ValueError(f"a default folder begins with ~/ or /, not {self.folder!r}")
        if unknown := set(self.systems) - set(SYSTEMS):
            raise ValueError(f"unknown systems {sorted(unknown)}: name them among {', '.join(SYSTEMS)}")

    def paths(self, environ: Mapping[str, str], home: Path) -> list[Path]:
        """Where the logs are with these environment variables and this home folder."""
        value = environ.get(self.env, "") if self.env else ""
        if self.several:
            moved = [part for part in value.split(",") if part.strip()]
        elif value:
            moved = [value]
        else:
            moved = []
        if moved:
            return [self._within(Path(folder).expanduser()) for folder in moved]
        if self.folder == "~":
            return [self._within(home)]
        if self.folder.startswith("~/"):
            return [self._within(home / self.folder[2:])]
        return [self._within(Path(self.folder))]

    def shown(self) -> str:
        """The default path as a reader writes it: ``~/.claude/projects``."""
        return f"{self.folder.rstrip('/')}/{self.under}" if self.under else self.folder

    def moved(self) -> str:
        """Where ``env`` puts the logs, as a reader writes it: ``$CLAUDE_CONFIG_DIR/projects``; "" if nothing does."""
        if not self.env:
            return ""
        return f"${self.env}/{self.under}" if self.under else f"${self.env}"

    def _within(self, folder: Path) -> Path:
        return folder / self.under if self.under else folder


@dataclass(frozen=True)
class Kind:
    """A kind of agent log: what a source of it is called and how it is read.

    ``reader`` is the module path of the module that reads it, a ``reader.Reader`` whose
    ``KIND`` is ``name`` (``check``, ``read`` and, optionally, ``read_from``, ``newest`` and
    ``log_files``: see ``archivist.agents.reader``). It is
    imported only when a source of the kind is checked or read, so that naming the kinds
    loads no reader.
    """

    name: str  # on the command line (--source NAME=PATH) and as a conversation's agent
    reader: str  # "archivist.agents.claude_code"
    description: str  # one line: what it reads
    source: str = ""  # what a source of it is, what to point it at (Markdown)
    conversation: str = ""  # what one conversation of it is (Markdown)
    locations: tuple[Location, ...] = ()  # where its logs are by default, for --discover
    sample: str = ""  # its sample source, under the repository's sample-agent-logs/ (the kinds built in)
    shape: str = ""  # where the shape of its logs was learned, and the versions it covers (Markdown)
    usage: str = ""  # what it records of tokens and cost, as the archive keeps it, or that it records none (Markdown)

    def __post_init__(self) -> None:
        if not NAME.match(self.name) or self.name in RESERVED:
            raise ValueError(
                f"an agent-log kind is named in lowercase letters, digits and hyphens, and not "
                f"{' or '.join(RESERVED)}: not {self.name!r}"
            )
        if not _MODULE.match(self.reader):
            raise ValueError(f"the reader of {self.name} is a module path such as package.module, not {self.reader!r}")
        if not self.description.strip() or "\n" in self.description:
            raise ValueError(f"the description of {self.name} is one line")

    @classmethod
    def from_table(cls, table: Mapping[str, Any], origin: str) -> Kind:
        """A kind as a TOML file declares it (``archivist/agents/*/kind.toml``): its fields, and
        ``[[locations]]`` tables of ``Location``'s; ValueError naming ``origin`` for any other key."""
        texts = {"name", "reader", "description", "source", "conversation", "sample", "shape", "usage"}
        place: dict[str, type] = {"folder": str, "under": str, "env": str, "systems": list, "several": bool}
        locations = table.get("locations", [])
        if not isinstance(locations, list) or not all(isinstance(location, dict) for location in locations):
            raise ValueError(f"{origin}: locations is a list of tables ([[locations]])")
        unknown = set(table) - texts - {"locations"}
        unknown |= {f"locations.{key}" for location in locations for key in set(location) - set(place)}
        if unknown:
            raise ValueError(f"{origin}: unknown keys {', '.join(sorted(unknown))}")
        wrong = [key for key in texts & set(table) if not isinstance(table[key], str)]
        wrong += [
            f"locations.{key}"
            for location in locations
            for key, value in location.items()
            if not isinstance(value, place[key])
            or (isinstance(value, list) and not all(isinstance(s, str) for s in value))
        ]
        if wrong:
            raise ValueError(f"{origin}: {', '.join(sorted(set(wrong)))} of the wrong type")
        if missing := {"name", "reader", "description"} - set(table):
            raise ValueError(f"{origin}: {', '.join(sorted(missing))} missing")
        try:
            made = tuple(
                Location(**{**location, "systems": tuple(location.get("systems", SYSTEMS))}) for location in locations
            )
            return cls(**{**table, "locations": made})
        except ValueError as error:
            raise ValueError(f"{origin}: {error}") from error

    def variables(self) -> list[str]:
        """The environment variables that move its default locations."""
        return list(dict.fromkeys(location.env for location in self.locations if location.env))


Register = Callable[[Kind], None]  # what register_agent_kinds is given


@hookspec
def register_agent_kinds(register: Register) -> None:
    """Register kinds of agent log: call ``register(Kind(...))`` once for each."""
