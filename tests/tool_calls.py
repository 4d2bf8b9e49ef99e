"""What the tool-input tests share: a source indexed through the indexer, and each tool call it
stored with the files it names; a log's files written."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from conftest import write_files

from archivist.archive.indexer import index_workspace
from archivist.workspace import archive_path

Calls = list[tuple[dict[str, Any], list[tuple[str, int]]]]

# an edit the tests make, and the diff it shows
OLD = "def add(a, b):\n    return a - b\n"
NEW = "def add(a, b):\n    return a + b\n"
REPLACED = "\n".join(
    [
        "--- calc.py",
        "+++ calc.py",
        "@@ -1,2 +1,2 @@",
        " def add(a, b):",
        "-    return a - b",
        "+    return a + b",
    ]
)


def indexed_calls(tmp_path: Path, kind: str, source: Path) -> Calls:
    """Each stored tool call of the source's sessions, with its file rows (file, changed)."""
    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n"})
    index_workspace(workspace, log_sources=[(kind, source)])
    db = sqlite3.connect(archive_path(workspace))
    found = []
    for message_id, tool_calls in db.execute(
        "SELECT id, tool_calls FROM messages WHERE tool_calls != '[]' ORDER BY id"
    ):
        for place, call in enumerate(json.loads(tool_calls)):
            rows = db.execute(
                "SELECT file, changed FROM file_calls WHERE message_id = ? AND call = ? ORDER BY file",
                (message_id, place),
            ).fetchall()
            found.append((call, rows))
    db.close()
    return found


def dump(file: Path, value: Any) -> Path:
    """``value`` written to ``file``: a text as it is, anything else as JSON."""
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
    return file


def lines(*values: Any) -> str:
    """JSONL: each value on its line, a text as it is."""
    return "".join((value if isinstance(value, str) else json.dumps(value)) + "\n" for value in values)
