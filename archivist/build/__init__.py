"""Building the archive: walk the workspace, parse each file, read its dates, and index it into SQLite."""
