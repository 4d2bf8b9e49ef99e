"""The code blocks of the README and docs/, and the names they mention, as the doc tests read them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from conftest import ROOT

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = ("bash", "sh", "shell", "console")
# a block's language that a test reads as that language (a shell block runs; the others parse)
CHECKED = (*SHELL, "json", "python", "toml")
FENCE_RE = re.compile(r"^```(?P<language>[\w-]*)\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)
# the line before a block that says why no test runs it
NOT_RUN_RE = re.compile(r"<!-- not run: (?P<reason>[^>]*?\S[^>]*?) -->\s*$")


@dataclass(frozen=True)
class Block:
    """A fenced code block: its document, the line its fence opens on, its language and text,
    and why no test runs it (None when one does)."""

    document: Path
    line: int
    language: str
    body: str
    not_run: str | None

    @property
    def name(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def blocks(document: Path) -> list[Block]:
    """Every fenced code block of a document."""
    text = document.read_text(encoding="utf-8")
    found = []
    for match in FENCE_RE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = NOT_RUN_RE.search(before)
        line = text.count("\n", 0, match.start()) + 1
        found.append(Block(document, line, match["language"], match["body"], marker["reason"] if marker else None))
    return found


def all_blocks() -> list[Block]:
    return [block for document in DOCUMENTS for block in blocks(document)]


def commands(block: Block) -> list[str]:
    """A shell block's commands: each line, without its trailing comment."""
    lines = (re.sub(r"\s+#\s.*$", "", line).strip() for line in block.body.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def prose(document: Path) -> str:
    """A document's text without its code blocks."""
    return FENCE_RE.sub("", document.read_text(encoding="utf-8"))
