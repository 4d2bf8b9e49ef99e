"""The kinds of agent log built in, one folder each; and ``KINDS``, the names of every kind registered.

Each kind built in is a package of ``archivist.agents`` whose ``kind.toml`` declares it
(``hookspecs.Kind.from_table``): its name, the module that reads it (the package itself), a
line saying what it reads, and where its logs are by default. This module is the plugin that
registers them through the ``register_agent_kinds`` hook; the registry
(``archivist.agents.registry``) adds the kinds that installed packages register.

Nothing here imports a reader: what only names the kinds (the command's help, the checks of
a search's ``agents``) loads none of them.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

from archivist.agents.hookspecs import Kind, Register, hookimpl

FOLDER = Path(__file__).parent  # holds a folder per kind built in, each with its kind.toml
DECLARATION = "kind.toml"


@hookimpl
def register_agent_kinds(register: Register) -> None:
    """Register each kind built in, in the order of their folders' names."""
    for kind in built_in():
        register(kind)


@functools.cache
def built_in() -> tuple[Kind, ...]:
    """The kinds declared by the folders' ``kind.toml`` files, read once; ValueError naming the file of one that is not a kind."""
    found = []
    for path in sorted(FOLDER.glob(f"*/{DECLARATION}")):
        origin = f"archivist/agents/{path.parent.name}/{DECLARATION}"
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
