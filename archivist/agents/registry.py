"""Every kind of agent log Archivist reads, as the plugins register them.

The plugins are ``archivist.agents.kinds`` (the kinds built in, one TOML file each, found by
listing that folder: no list of them is kept) and the setuptools entry points of the group
``archivist`` (a separate installed package adding a kind). Each
registers its kinds through the ``register_agent_kinds`` hook (``hookspecs``). Every list
of kinds (the command line's, the search's ``agents``, ``sources --discover``, the
tables of docs/sources.md) is asked of ``pm`` here, so a plugin registered on it at run time is
known everywhere from then on.

Registering is cheap: an entry names its reader by module path, imported only by
``reader`` when a source of the kind is checked or read, and refused there unless it is a
``reader.Reader`` whose ``KIND`` is the entry's name.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pluggy

from archivist import installed
from archivist.agents import hookspecs
from archivist.agents.hookspecs import SYSTEMS, Kind

BUILT_IN = "archivist.agents.kinds"  # the plugin that registers the kinds built in (its TOML files)


class UnknownKind(KeyError):
    """A kind that no plugin registers (a source whose plugin was uninstalled since, a name mistyped)."""


class NotAReader(TypeError):
    """A kind's reader that is not one: a module without a ``reader.Reader``'s names, or whose
    ``KIND`` is not the name its registry entry gives (a plugin's mistake, told by name)."""


def manager(entry_points: bool = True) -> pluggy.PluginManager:
    """A plugin manager holding the kinds built in and, with ``entry_points``, those that installed packages add."""
    plugins = pluggy.PluginManager(hookspecs.PROJECT)
    plugins.add_hookspecs(hookspecs)
    plugins.register(importlib.import_module(BUILT_IN), BUILT_IN)
    if entry_points:
        for name, value in installed.entry_points():  # (as pluggy's load_setuptools_entrypoints, kept between runs)
            if plugins.get_plugin(name) is not None or plugins.is_blocked(name):
                continue
            module, _, attribute = value.partition(":")
            plugin: Any = importlib.import_module(module.strip())
            for part in filter(None, attribute.strip().split(".")):
                plugin = getattr(plugin, part)
            plugins.register(plugin, name)
    return plugins


pm = manager()


def kinds(plugins: pluggy.PluginManager | None = None) -> dict[str, Kind]:
    """Every kind the plugins register, by name, in the order of their names.

    ValueError where two plugins register one name with different entries.
    """
    found: dict[str, Kind] = {}

    def register(kind: Kind) -> None:
        if not isinstance(kind, Kind):
            raise TypeError(f"register_agent_kinds registers a Kind, not {kind!r}")
        known = found.setdefault(kind.name, kind)
        if known != kind:
            raise ValueError(
                f"the agent-log kind {kind.name!r} is registered twice, read by {known.reader} and by "
                f"{kind.reader}: uninstall one of the packages that add it"
            )

    (plugins or pm).hook.register_agent_kinds(register=register)
    return {name: found[name] for name in sorted(found)}


def names() -> tuple[str, ...]:
    """The names of every kind registered, in order."""
    return tuple(kinds())


def get(name: str) -> Kind:
    """The kind of this name (UnknownKind where none is registered)."""
    kind = kinds().get(name)
    if kind is None:
        raise UnknownKind(name)
    return kind


def reader(name: str) -> ModuleType:
    """The module that reads the kind of this name, imported now if it is not yet; NotAReader
    where it is not a ``reader.Reader`` of this kind."""
    from archivist.agents.reader import Reader  # (naming the kinds does not need it)

    kind = get(name)
    module = importlib.import_module(kind.reader)
    if not isinstance(module, Reader):
        missing = [member for member in ("KIND", "check", "read") if not hasattr(module, member)]
        raise NotAReader(f"{kind.reader}, the reader of the agent-log kind {name!r}, has no {', '.join(missing)}")
    if name != module.KIND:
        raise NotAReader(
            f"{kind.reader} reads the agent-log kind {module.KIND!r}, not {name!r} as its registry entry says: "
            "a reader's KIND is its entry's name"
        )
    return module


def this_system(platform: str = sys.platform) -> str:
    """The system this runs on, as ``Location.systems`` names it."""
    if platform == "darwin":
        return "macos"
    if platform in ("win32", "cygwin"):
        return "windows"
    return "linux"


def default_locations(environ: Mapping[str, str], home: Path, system: str | None = None) -> list[tuple[str, Path]]:
    """Where each kind keeps its logs by default on ``system`` (this one by default), in the
    order of the kinds, each path once: with ``environ``'s variables, and ``home`` for ``~``."""
    system = system or this_system()
    if system not in SYSTEMS:
        raise ValueError(f"unknown system {system!r}: one of {', '.join(SYSTEMS)}")
    found: list[tuple[str, Path]] = []
    for kind in kinds().values():
        for location in kind.locations:
            if system in location.systems:
                found.extend((kind.name, path) for path in location.paths(environ, home))
    return list(dict.fromkeys(found))


def variables() -> tuple[str, ...]:
    """The environment variables that move the kinds' default locations, in the order of the kinds."""
    return tuple(dict.fromkeys(name for kind in kinds().values() for name in kind.variables()))


def sample_sources(folder: str = "sample-agent-logs") -> list[str]:
    """The ``--source`` arguments that read every kind's sample (``make serve``): ``KIND=FOLDER/SAMPLE``."""
    return [f"--source {kind.name}={folder}/{kind.sample}" for kind in kinds().values() if kind.sample]


if __name__ == "__main__":  # python -m archivist.agents.registry: the samples' --source arguments
    print(" ".join(sample_sources()))
