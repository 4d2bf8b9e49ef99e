"""Archivist: one SQLite archive of a workspace's conversations, reports, memories and records.

The subpackages are the layers, each importing only those below it:

- ``archivist.web``, ``archivist.mcp``, ``archivist.cli``: the surfaces (Datasette plugin
  and pages, MCP server, command line);
- ``archivist.queries``: the canned queries (SQL files, parameter rules, SQL functions);
- ``archivist.semantic``: the embedding model, chunks, embeddings and vectors;
- ``archivist.archive``: the archive itself (schema, migrations, indexing, sessions stored);
- ``archivist.agents`` and ``archivist.documents``: reading sources, agent logs and a
  workspace's files;
- ``archivist.secrets``, ``archivist.dates``, ``archivist.jsonvalues``: what reading needs
  (masking secrets, dates as written, JSON within a budget);
- ``archivist.workspace`` and ``archivist.errors``: where things live, and the error contract.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    """``__version__``, read from the installed package's metadata when asked for (reading it
    costs more than a whole keyword search, so no command pays for it unless it shows it)."""
    if name != "__version__":
        raise AttributeError(f"module 'archivist' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("archivist")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"
