"""Where things live: a workspace, its archive, and this project's configuration directory."""

from __future__ import annotations

from pathlib import Path

# The repository root is a Datasette configuration directory (metadata.yml, plugins/, templates/).
CONFIG_DIR = Path(__file__).resolve().parent.parent
METADATA_PATH = CONFIG_DIR / "metadata.yml"
DATABASE_NAME = "archive"


def archive_path(workspace: Path) -> Path:
    return Path(workspace) / ".archivist" / "archive.db"
