"""The kinds of agent log built in, one module each; and ``KINDS``, the names of every kind registered.

Each module of this package registers one kind through the ``register_agent_kinds`` hook
(``archivist.agents.hookspecs``): its name, the module that reads it, a line saying what
it reads, and where its logs are by default. The registry (``archivist.agents.registry``)
loads every module here, and the kinds that installed packages add.

A module here imports no reader, only ``hookspecs``: what only names the kinds (the
command's help, the checks of a search's ``agents``) loads none of them.
"""

from __future__ import annotations


def __getattr__(name: str) -> tuple[str, ...]:
    """``KINDS``: the names of the kinds registered now, in order (built in, installed, or registered at run time)."""
    if name == "KINDS":
        from archivist.agents import registry

        return registry.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
