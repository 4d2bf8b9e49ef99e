"""The kinds of agent log built in, one TOML file each; and ``KINDS``, the names of every kind registered.

Each file here declares one kind (``hookspecs.Kind.from_table``): its name, the module that
reads it, a line saying what it reads, and where its logs are by default. This package is
the plugin that registers them through the ``register_agent_kinds`` hook; the registry
(``archivist.agents.registry``) adds the kinds that installed packages register.

Nothing here imports a reader: what only names the kinds (the command's help, the checks of
a search's ``agents``) loads none of them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from archivist.agents.hookspecs import Kind, Register, hookimpl

FOLDER = Path(__file__).parent


@hookimpl
def register_agent_kinds(register: Register) -> None:
    """Register each kind declared in this folder, in the order of the files' names."""
    for path in sorted(FOLDER.glob("*.toml")):
        with path.open("rb") as file:
            register(Kind.from_table(tomllib.load(file), f"archivist/agents/kinds/{path.name}"))


def __getattr__(name: str) -> tuple[str, ...]:
    """``KINDS``: the names of the kinds registered now, in order (built in, installed, or registered at run time)."""
    if name == "KINDS":
        from archivist.agents import registry

        return registry.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
