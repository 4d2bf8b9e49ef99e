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

import contextlib
import functools
import json
import os
from pathlib import Path
from typing import Any

from archivist.agents.hookspecs import Kind, Register, hookimpl

FOLDER = Path(__file__).parent  # holds a folder per kind built in, each with its kind.toml
DECLARATION = "kind.toml"
KEPT_FILE = "kinds.json"  # the declarations' tables as last read, in the cache folder (named for FOLDER)


@hookimpl
def register_agent_kinds(register: Register) -> None:
    """Register each kind built in, in the order of their folders' names."""
    for kind in built_in():
        register(kind)


@functools.cache
def built_in() -> tuple[Kind, ...]:
    """The kinds declared by the folders' ``kind.toml`` files, read once; ValueError naming the file of
    one that is not a kind. A kept table that is not a kind is read again from its file first."""
    try:
        return _kinds(declarations())
    except ValueError:
        return _kinds(declarations(kept=False))


def _kinds(declared: list[tuple[str, dict[str, Any]]]) -> tuple[Kind, ...]:
    found = []
    for origin, table in declared:
        try:
            table.pop("dropped", None)  # what its reader leaves out on purpose, and why: tests/test_lossless.py
            found.append(Kind.from_table(table, origin))
        except (TypeError, ValueError) as error:
            raise ValueError(f"{origin} is not an agent-log kind: {error}") from error
    return tuple(found)


def declarations(kept: bool = True) -> list[tuple[str, dict[str, Any]]]:
    """Each ``kind.toml`` file's table, by the file's path in the package, in the order of their folders.

    Parsing TOML costs every start some milliseconds, so the tables are kept in the cache folder
    (``KEPT_FILE``) with the folder and each file's name, modification time and size, and read again
    when any of them differs (or, without ``kept``, in any case); a cache that cannot be read or
    written only costs the reading."""
    paths = sorted(FOLDER.glob(f"*/{DECLARATION}"))
    stamp = [str(FOLDER), *([path.parent.name, *_time_and_size(path)] for path in paths)]
    origins = [f"archivist/agents/{path.parent.name}/{DECLARATION}" for path in paths]
    cached = _kept() if kept else {}
    if cached.get("stamp") == stamp and _tables(cached.get("tables"), len(paths)):
        return list(zip(origins, cached["tables"], strict=True))
    tables = [_read(path, origin) for path, origin in zip(paths, origins, strict=True)]
    _keep({"stamp": stamp, "tables": tables})
    return list(zip(origins, tables, strict=True))


def _time_and_size(path: Path) -> list[int]:
    try:
        stat = path.stat()
    except OSError:
        return [0, -1]
    return [stat.st_mtime_ns, stat.st_size]


def _read(path: Path, origin: str) -> dict[str, Any]:
    import tomllib

    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ValueError(f"{origin} is not an agent-log kind: {error}") from error


def _cache_file() -> Path:
    """The cache file of this folder of kinds (one a checkout or installation, so that several used in turn keep theirs)."""
    import hashlib

    from archivist.installed import cache_dir

    return cache_dir() / KEPT_FILE.replace(".", f"-{hashlib.sha256(str(FOLDER).encode()).hexdigest()[:16]}.", 1)


def _kept() -> dict[str, Any]:
    try:
        kept = json.loads(_cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return kept if isinstance(kept, dict) else {}


def _tables(tables: Any, count: int) -> bool:
    """Whether a cache file's tables have the shape of ``count`` declarations' (anything else is read again)."""
    return isinstance(tables, list) and len(tables) == count and all(isinstance(table, dict) for table in tables)


def _keep(kept: dict[str, Any]) -> None:
    path = _cache_file()
    with contextlib.suppress(OSError, TypeError, ValueError):  # (a table JSON cannot hold is read each time)
        text = json.dumps(kept)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)


def __getattr__(name: str) -> tuple[str, ...]:
    """``KINDS``: the names of the kinds registered now, in order (built in, installed, or registered at run time)."""
    if name == "KINDS":
        from archivist.agents import registry

        return registry.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
