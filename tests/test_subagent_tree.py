"""A session's sub-agents, and theirs, as a tree on its page, each with its messages, tokens and
cost; the session's own cost in its header, priced and as its log states it.

OpenCode sessions are written in its JSON storage (a session names its parent by ``parentID``),
indexed as a source of a workspace, and read through the real Datasette app and MCP.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import started_datasette, write_files
from mcp import Client
from test_conversation_page import meta, page_of

from archivist.archive.indexer import index_workspace
from archivist.mcp import tools as mcp_tools
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

PROJECT = "4b0ea68d7af9a6031a7ffda7ad66e0cb83315750"
MODEL = "claude-sonnet-4-5"
START = 1764113600000
# each session: its id, its parent's, its title, its answer's tokens and the cost its log states
SESSIONS = [
    ("ses_root", None, "Make short links case-insensitive", 1200, 0.0500),
    ("ses_child_a", "ses_root", "Find every lookup of a code", 800, 0.0100),
    ("ses_grandchild", "ses_child_a", "Read the resolver", 400, 0.0020),
    ("ses_child_b", "ses_root", "Check the tests", 600, 0.0030),
    ("ses_other", None, "Unrelated session", 100, 0.0010),
]


def storage(root: Path) -> Path:
    """OpenCode's JSON storage holding SESSIONS: each a user's question and an answer with its usage."""
    files: dict[str, str] = {}
    for n, (session, parent, title, tokens, cost) in enumerate(SESSIONS):
        at = START + n * 60_000
        info = {"id": session, "projectID": PROJECT, "directory": "/home/ana/shorty", "title": title}
        info |= {"version": "1.0.150", "time": {"created": at, "updated": at + 30_000}}
        if parent:
            info["parentID"] = parent
        files[f"storage/session/{PROJECT}/{session}.json"] = json.dumps(info)
        question = {"id": f"msg_{n}q", "sessionID": session, "role": "user", "time": {"created": at}}
        answer = {
            "id": f"msg_{n}a",
            "sessionID": session,
            "role": "assistant",
            "time": {"created": at + 10_000, "completed": at + 20_000},
            "modelID": MODEL,
            "providerID": "anthropic",
            "tokens": {"input": tokens, "output": tokens // 10, "reasoning": 0, "cache": {"read": 0, "write": 0}},
            "cost": cost,
        }
        for message, text in ((question, f"{title}?"), (answer, f"Done: {title.lower()}.")):
            files[f"storage/message/{session}/{message['id']}.json"] = json.dumps(message)
            part = {"id": f"prt_{message['id']}", "messageID": message["id"], "sessionID": session}
            files[f"storage/part/{message['id']}/prt_{message['id']}.json"] = json.dumps(
                part | {"type": "text", "text": text}
            )
    return write_files(root, files)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("subagent-tree")
    workspace = write_files(root / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[("opencode", storage(root / "opencode"))])
    return workspace


def ids(workspace: Path) -> dict[str, int]:
    with Archive.for_workspace(workspace) as archive:
        return {
            session: archive.run("find_document", {"document": f"opencode:{session}"})[0]["id"]
            for session, *_ in SESSIONS
        }


def priced(workspace: Path, document_id: int) -> float | None:
    import sqlite_utils

    db = sqlite_utils.Database(archive_path(workspace))
    return db.execute("select sum(price) from messages where document_id = ?", [document_id]).fetchone()[0]


def tree(page: str) -> list[tuple[int, str, str]]:
    """The sub-agent tree of a page: each entry's depth, link and text, in order."""
    block = re.search(r'<ul class="archivist-subagent-tree">(.*)</ul>\s*</section>', page, re.S)
    if not block:
        return []
    found, depth = [], 0
    for token in re.finditer(
        r'<ul>|</ul>|<li data-document="\d+"><a href="([^"]+)">([^<]*)</a> <span class="archivist-note">([^<]*)</span>',
        block[1],
    ):
        if token[0] == "<ul>":
            depth += 1
        elif token[0] == "</ul>":
            depth -= 1
        else:
            found.append((depth, token[1], html.unescape(f"{token[2]} | {token[3]}")))
    return found


async def test_a_session_shows_its_sub_agents_and_theirs_as_a_tree(workspace):
    found = ids(workspace)
    datasette = await started_datasette(archive_path(workspace))
    page = await page_of(datasette, f"/document/{found['ses_root']}")
    shown = tree(page)
    assert [(depth, href) for depth, href, _ in shown] == [
        (0, f"/document/{found['ses_child_a']}"),
        (1, f"/document/{found['ses_grandchild']}"),
        (0, f"/document/{found['ses_child_b']}"),
    ]
    grandchild = shown[1][2]
    assert grandchild.startswith("Read the resolver | 2 messages · 440 tokens · $")
    assert grandchild.endswith("priced · $0.0020 stated by the log")
    # each sub-agent's page links back to the session that started it, and shows its own
    child = await page_of(datasette, f"/document/{found['ses_child_a']}")
    assert meta(child)["Sub-agent of"] == "Make short links case-insensitive"
    assert [href for _, href, _ in tree(child)] == [f"/document/{found['ses_grandchild']}"]
    assert tree(await page_of(datasette, f"/document/{found['ses_grandchild']}")) == []


async def test_the_header_shows_the_sessions_cost_priced_and_as_its_log_states_it(workspace):
    found = ids(workspace)
    datasette = await started_datasette(archive_path(workspace))
    page = await page_of(datasette, f"/document/{found['ses_root']}")
    price = priced(workspace, found["ses_root"])
    assert price and price > 0
    assert meta(page)["Cost"] == f"${price:,.4f} priced · $0.0500 stated by the log"
    usage = re.search(r'<span class="archivist-usage"[^>]*>([^<]*)</span>', page)[1]
    assert usage == f"1,200 in · 120 out · ${price:,.4f} priced · $0.0500 stated by the log"


async def test_mcp_gives_the_sessions_cost_and_its_sub_agents(workspace):
    found = ids(workspace)
    async with Client(mcp_tools.create_server(archive_path(workspace), workspace)) as client:
        result = await client.call_tool("get_conversation", {"document": str(found["ses_root"])})
    answer: dict[str, Any] = result.structured_content
    assert answer["price"] == pytest.approx(priced(workspace, found["ses_root"]))
    assert answer["stated_cost"] == pytest.approx(0.05)
    assert [(item["id"], item["parent"], item["depth"]) for item in answer["subagents"]] == [
        (found["ses_child_a"], found["ses_root"], 1),
        (found["ses_grandchild"], found["ses_child_a"], 2),
        (found["ses_child_b"], found["ses_root"], 1),
    ]
    assert answer["subagents"][0]["messages"] == 2 and answer["subagents"][0]["tokens"] == 880
    assert all("session_price" not in message and "subagents" not in message for message in answer["messages"])
    assert [message.get("price") is not None for message in answer["messages"]] == [False, True]
