"""The kinds of agent log built in, one TOML file each; and ``KINDS``, the names of every kind registered.

Each file here declares one kind (``hookspecs.Kind.from_table``): its name, the module that
reads it, a line saying what it reads, and where its logs are by default. This package is
the plugin that registers them through the ``register_agent_kinds`` hook; the registry
(``archivist.agents.registry``) adds the kinds that installed packages register.

Nothing here imports a reader: what only names the kinds (the command's help, the checks of
a search's ``agents``) loads none of them.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

from archivist.agents.hookspecs import Kind, Register, hookimpl

FOLDER = Path(__file__).parent


@hookimpl
def register_agent_kinds(register: Register) -> None:
    """Register each kind declared in this folder, in the order of the files' names."""
    for kind in built_in():
        register(kind)


@functools.cache
def built_in() -> tuple[Kind, ...]:
    """The kinds declared in this folder, read once; ValueError naming the file of one that is not a kind."""
    found = []
    for path in sorted(FOLDER.glob("*.toml")):
        origin = f"archivist/agents/kinds/{path.name}"
        try:
            with path.open("rb") as file:
                table = tomllib.load(file)
            table.pop("dropped", None)  # what its reader leaves out on purpose, and why: tests/test_lossless.py
            found.append(Kind.from_table(table, origin))
        except (OSError, tomllib.TOMLDecodeError, TypeError, ValueError) as error:
            raise ValueError(f"{origin} is not an agent-log kind: {error}") from error
    return tuple(found)


def __getattr__(name: str) -> tuple[str, ...]:
    """``KINDS``: the names of the kinds registered now, in order (built in, installed, or registered at run time)."""
    if name == "KINDS":
        from archivist.agents import registry

        return registry.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
