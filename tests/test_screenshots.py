"""The README's pictures of the main pages, taken from the sample in Debian's Chromium.

`archivist serve` runs on an embedded copy of the sample workspace with every kind's sample
agent logs as its sources, as `make serve` serves it, and each picture is the browser's window
at 1,366 by 900 pixels: the search page with its results and facets, a conversation showing a
tool call's diff, and the activity page. They are always written to tests/artifacts/screenshots/;
with ARCHIVIST_UPDATE_SCREENSHOTS=1 also to docs/images/, where the README shows them.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import ARTIFACTS, LOGS, ROOT
from test_browser import browser  # noqa: F401  (the fixture, used by name)
from test_web import serving

from archivist.agents import registry
from archivist.archive.indexer import index_workspace
from archivist.workspace import archive_path

SHOTS = ARTIFACTS / "screenshots"
IMAGES = ROOT / "docs" / "images"
WIDTH, HEIGHT = 1366, 900
MOST_BYTES = 250_000
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# the session whose edit the conversation picture shows: the first changed file of a Claude Code
# session, else of any agent
EDITED_SQL = """
SELECT m.document_id, m.seq FROM file_calls f
JOIN messages m ON m.id = f.message_id JOIN documents d ON d.id = m.document_id
WHERE f.changed ORDER BY d.type = 'claude-code' DESC, m.document_id, m.seq LIMIT 1
"""


def search(page, served: Served) -> None:
    """The search page: sessions of several agents that mention a test, with their facets."""
    page.goto(served.base + "/search?query=test&entities=conversation")
    assert page.locator(".archivist-hit").count() >= 3
    assert page.locator('section[data-facet="agent"] a').count() >= 3


def conversation(page, served: Served) -> None:
    """A conversation, scrolled to a tool call's edit shown as a unified diff."""
    with sqlite3.connect(archive_path(served.workspace)) as db:
        document, seq = db.execute(EDITED_SQL).fetchone()
    page.goto(f"{served.base}/document/{document}?m={seq}#m{seq}")
    diff = page.locator(f"#m{seq} .archivist-diff").first
    assert diff.locator(".archivist-diff-added, .archivist-diff-removed").count() >= 1
    diff.evaluate("diff => { diff.closest('details').open = true; }")  # the call, opened as a reader opens it
    diff.scroll_into_view_if_needed()
    assert diff.is_visible()


def activity(page, served: Served) -> None:
    """The activity page: the newest 30 days, its charts and each project's sessions."""
    page.goto(served.base + "/activity")
    assert page.locator("section.content h1").count() == 1
    assert page.locator("a[href^='/project/']").count() >= 1


PICTURES: dict[str, Callable[[Any, Served], None]] = {
    "search": search,
    "conversation": conversation,
    "activity": activity,
}


@dataclass(frozen=True)
class Served:
    """The server the pictures are taken of: its base URL, the URL it printed (its token in it)
    and its workspace."""

    base: str
    printed: str
    workspace: Path


def png_size(data: bytes) -> tuple[int, int]:
    """A PNG's width and height, from its header; an error for anything that is not a PNG."""
    if data[:8] != PNG_SIGNATURE or data[12:16] != b"IHDR":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    return width, height


@pytest.fixture(scope="module")
def server(embedded_sample, tmp_path_factory):
    """The embedded sample with every kind's sample agent logs, served."""
    workspace = tmp_path_factory.mktemp("screenshots") / "sample"
    shutil.copytree(embedded_sample, workspace)
    kinds = registry.kinds(registry.manager(entry_points=False))
    index_workspace(workspace, log_sources=[(name, LOGS / kind.sample) for name, kind in kinds.items()])
    with serving(workspace) as base:
        yield Served(base, base.printed, workspace)


@pytest.mark.parametrize("name", PICTURES)
def test_each_picture_of_the_readme_is_taken_from_the_sample(name, browser, server):  # noqa: F811
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.goto(server.printed)  # signs the tab in
    PICTURES[name](page, server)
    SHOTS.mkdir(parents=True, exist_ok=True)
    data = page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)
    context.close()
    assert png_size(data) == (WIDTH, HEIGHT)
    assert len(data) <= MOST_BYTES, f"{name}.png is {len(data):,} bytes"
    if os.environ.get("ARCHIVIST_UPDATE_SCREENSHOTS") == "1":
        IMAGES.mkdir(parents=True, exist_ok=True)
        (IMAGES / f"{name}.png").write_bytes(data)


def test_every_picture_the_readme_shows_is_one_this_file_takes() -> None:
    shown = re.findall(r"!\[[^\]]*\]\(docs/images/([^)]+)\)", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert sorted(shown) == sorted(f"{name}.png" for name in PICTURES)
    for image in shown:
        data = (IMAGES / image).read_bytes()
        assert png_size(data) == (WIDTH, HEIGHT) and len(data) <= MOST_BYTES, image


def test_a_file_that_is_not_a_png_has_no_size() -> None:
    with pytest.raises(ValueError, match="not a PNG"):
        png_size(b"GIF89a" + bytes(30))
    assert png_size(PNG_SIGNATURE + struct.pack(">I4sII", 13, b"IHDR", 3, 2)) == (3, 2)
