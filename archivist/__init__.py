"""Archivist: one SQLite archive of a workspace's conversations, reports, memories and records.

The subpackages are the layers, each importing only those below it:

- ``archivist.web``, ``archivist.mcp``, ``archivist.cli``: the surfaces (Datasette plugin
  and pages, MCP server, command line);
- ``archivist.queries``: the canned queries (SQL files, parameter rules, SQL functions);
- ``archivist.semantic``: the embedding model, chunks, embeddings and vectors;
- ``archivist.build``: building the archive (walk, parse, dates, schema, indexer);
- ``archivist.workspace`` and ``archivist.errors``: where things live, and the error contract.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("archivist")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
