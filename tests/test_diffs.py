"""A tool call's input and the changes it made to files, shown as unified diffs: on the
conversation page, on the file page (with its changes alone), and in MCP's file_history and
get_conversation. Claude Code sessions are written from the published line format and indexed
by the real indexer; the pages are read through the real Datasette app."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from conftest import started_datasette, write_files
from mcp import Client
from test_conversation_page import assistant, details, jsonl, messages, page_of, tool_result, tool_use, user

from archivist.archive.indexer import index_workspace
from archivist.mcp import tools as mcp_tools
from archivist.queries import diffs
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

SESSION = "5d1e0c2a-9b8f-4e7d-a6c5-b4a392817060"
APP = "/home/ana/proj/app.py"
NOTES = "/home/ana/proj/notes.txt"
OLD = "def answer():\n    return 41\n"
NEW = "def answer():\n    return '</span><script>alert(1)</script>'\n"
WRITTEN = "".join(f"note {n}\n" for n in range(500))
PROMPT = "Check <b>every</b> caller of answer()"
PATTERN = "x" * 5000

LINES = [
    user("Fix the answer", "u1", None, "2025-11-23T04:53:42.000Z", session=SESSION),
    assistant(
        [
            tool_use("toolu_1", "Read", file_path=APP),
            tool_use("toolu_2", "Edit", file_path=APP, old_string=OLD, new_string=NEW),
            tool_use("toolu_3", "Write", file_path=NOTES, content=WRITTEN),
            tool_use("toolu_4", "Task", description="Check the callers", prompt=PROMPT),
            tool_use("toolu_5", "Grep", pattern=PATTERN),
            tool_use("toolu_6", "TodoRead"),
        ],
        "a1",
        "u1",
        "2025-11-23T04:53:45.000Z",
        session=SESSION,
    ),
    tool_result("toolu_1", "the file", "u2", "a1", "2025-11-23T04:53:47.000Z", session=SESSION),
]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("diffs")
    workspace = write_files(root / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    projects = write_files(root / "claude" / "projects", {f"-home-ana-proj/{SESSION}.jsonl": jsonl(LINES)})
    index_workspace(workspace, log_sources=[("claude-code", projects)])
    return workspace


@pytest.fixture
async def datasette(workspace: Path):
    return await started_datasette(archive_path(workspace))


def session_id(workspace: Path) -> int:
    with Archive.for_workspace(workspace) as archive:
        return archive.run("find_document", {"document": f"claude-code:-home-ana-proj/{SESSION}"})[0]["id"]


def folds(block: str) -> dict[str, str]:
    """Each tool call fold of a message: its tool's name and its HTML."""
    found = re.findall(r'(<details class="archivist-tool-call" data-tool="(\w+)">.*?</details>)', block, re.S)
    return {name: fold for fold, name in found}


def diff_spans(fold: str) -> list[tuple[str, str]]:
    """The lines of a fold's diffs: each one's kind (its class) and its text."""
    return [
        (kind, html.unescape(text))
        for kind, text in re.findall(r'<span class="archivist-diff-(\w+)">(.*?)</span>', fold)
    ]


# --- diffs ----------------------------------------------------------------------------------------


def test_a_replacement_is_a_unified_diff_and_a_whole_file_every_line_added():
    lines = diffs.diff_lines({"file": "a.py", "old": OLD, "new": NEW})
    assert lines[:2] == ["--- a.py", "+++ a.py"] and lines[2].startswith("@@ ")
    assert "-    return 41" in lines and "+    return '</span><script>alert(1)</script>'" in lines
    assert [diffs.line_kind(line) for line in lines] == ["file", "file", "hunk", "context", "removed", "added"]
    written = diffs.diff_lines({"file": "n.txt", "old": None, "new": WRITTEN})
    assert written[:3] == ["--- /dev/null", "+++ n.txt", "@@ -0,0 +1,500 @@"] and len(written) == 503
    text, count = diffs.diff_text({"file": "n.txt", "new": WRITTEN}, limit=10)
    assert count == 503 and text.splitlines() == written[:10]
    patch = diffs.diff_lines({"file": "p.py", "patch": "--- p.py\n+++ p.py\n@@ -1 +1 @@\n-a\n+b"})
    assert patch == ["--- p.py", "+++ p.py", "@@ -1 +1 @@", "-a", "+b"]
    assert diffs.cut_line("+" + "y" * 5000) == "+" + "y" * (diffs.LINE_CHARS - 1) + "…"


def test_a_calls_edits_of_one_file_and_nothing_from_values_of_a_wrong_type():
    call = {
        "edits": [
            {"file": "src\\a.py", "old": "1", "new": "2"},
            {"file": "b.py", "new": "x"},
            "edit",
            {"file": 7},
            None,
        ]
    }
    assert [edit["file"] for edit in diffs.edits_of(call)] == ["src\\a.py", "b.py"]
    assert diffs.edits_of(call, "src/a.py") == [{"file": "src\\a.py", "old": "1", "new": "2"}]
    wrong = [{"file": "a", "old": 5, "new": "x"}, {"file": "a", "new": ["x"]}, {"file": "a", "patch": {}}]
    for hostile in (None, "x", [], {"edits": "x"}, {"edits": {"file": "a"}}, {"edits": [1, [2], {"old": "a"}, *wrong]}):
        assert diffs.edits_of(hostile) == []


# --- the conversation page ------------------------------------------------------------------------


async def test_each_call_shows_its_input_and_its_edits_as_coloured_diffs(datasette, workspace):
    block = messages(await page_of(datasette, f"/document/{session_id(workspace)}"))[1]
    calls = folds(block)
    assert list(calls) == ["Read", "Edit", "Write", "Task", "Grep", "TodoRead"]
    edited = diff_spans(calls["Edit"])
    assert edited == [(diffs.line_kind(line), line) for line in diffs.diff_lines({"file": APP, "old": OLD, "new": NEW})]
    assert ("removed", "-    return 41") in edited and ("context", " def answer():") in edited
    # hostile text in a diff is shown as text, never as markup
    assert "<script>" not in block and "&lt;/span&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in calls["Edit"]
    assert 'href="/file?path=%2Fhome%2Fana%2Fproj%2Fapp.py"' in calls["Edit"]
    # the texts an edit holds are not shown again as its input; the file's path is
    read_input = re.search(r'<dd class="archivist-tool-input"><pre>(.*?)</pre>', calls["Read"], re.S)[1]
    assert html.unescape(read_input) == '{"file_path":"' + APP + '"}'
    assert "old_string" not in calls["Edit"] and "note 399" not in calls["Write"]  # (cut at DIFF_LINES)


async def test_a_long_diff_or_input_is_cut_with_a_note_and_a_link_to_the_whole_call(datasette, workspace):
    page = await page_of(datasette, f"/document/{session_id(workspace)}")
    calls = folds(messages(page)[1])
    written = diff_spans(calls["Write"])
    assert len(written) == diffs.DIFF_LINES and written[-1] == ("added", f"+note {diffs.DIFF_LINES - 4}")
    assert f"shown: the first {diffs.DIFF_LINES} of {len(WRITTEN.splitlines()) + 3} lines" in calls["Write"]
    grep = re.search(r'<dd class="archivist-tool-input"><pre>(.*?)</pre>', calls["Grep"], re.S)[1]
    whole = len(PATTERN) + len('{"pattern":""}')
    assert len(html.unescape(grep)) == 4000 and f"shown: the first 4,000 of {whole:,} characters" in calls["Grep"]
    row = re.search(r'<a href="([^"]+)">the whole call</a>', calls["Grep"])[1]
    stored = (await datasette.client.get(html.unescape(row) + ".json?_shape=array")).json()[0]["tool_calls"]
    assert PATTERN in stored


async def test_a_task_shows_its_prompt_and_only_an_empty_call_says_it_has_nothing(datasette, workspace):
    calls = folds(messages(await page_of(datasette, f"/document/{session_id(workspace)}"))[1])
    prompt = re.search(
        r'<div class="archivist-tool-prompt"><p class="archivist-note">Prompt</p><pre>(.*?)</pre>', calls["Task"], re.S
    )
    assert prompt and html.unescape(prompt[1]) == PROMPT and "<b>every</b>" not in calls["Task"]
    assert '"description":"Check the callers"' in html.unescape(calls["Task"])
    nothing = [name for name, fold in calls.items() if "No file or command recorded" in fold]
    assert nothing == ["TodoRead"]
    assert [summary for _, _, summary in details(calls["Edit"])] == [f"Edit {APP}"]


# --- the file page --------------------------------------------------------------------------------


async def test_the_file_page_shows_each_change_as_its_diff_and_can_list_the_changes_alone(datasette, workspace):
    page = await page_of(datasette, f"/file?path={APP}")
    rows = re.findall(r"<tr data-document=.*?</tr>", page, re.S)
    assert [re.findall(r"<td>(\w+)</td><td><code", row)[0] for row in rows] == ["Read", "Edit"]
    assert diff_spans(rows[1]) == [
        (diffs.line_kind(line), line) for line in diffs.diff_lines({"file": APP, "old": OLD, "new": NEW})
    ]
    assert diff_spans(rows[0]) == [] and "<script>alert" not in page
    changes = re.search(r'<a href="([^"]+)">Changes only</a>', page)[1]
    only = await page_of(datasette, html.unescape(changes))
    assert len(re.findall(r"<tr data-document=", only)) == 1 and "archivist-diff-removed" in only
    assert 'aria-current="page">Changes only</strong>' in only and "Calls #" not in only
    every = re.search(r'<a href="([^"]+)">Every call</a>', only)[1]
    assert await page_of(datasette, html.unescape(every)) == page
    assert "No tool call of the archive's agent logs changed this file" in await page_of(
        datasette, "/file?path=notes.md&changes=1"
    )


@pytest.mark.parametrize("value", ["maybe", "2", "x" * 300])
async def test_a_changes_value_that_is_no_yes_or_no_is_a_clear_error(datasette, value):
    page = await page_of(datasette, f"/file?path=app.py&changes={value}", status=400)
    assert 'data-code="INVALID_PARAMETER"' in page and "changes is true or false" in page


# --- MCP ------------------------------------------------------------------------------------------


async def test_mcp_file_history_gives_each_change_as_a_bounded_diff(workspace):
    async with Client(mcp_tools.create_server(archive_path(workspace), workspace)) as client:
        every = (await client.call_tool("file_history", {"path": "app.py"})).structured_content
        changed = (await client.call_tool("file_history", {"path": "app.py", "changes": True})).structured_content
        written = (await client.call_tool("file_history", {"path": NOTES})).structured_content
    assert [(call["tool"], call["changed"]) for call in every["results"]] == [("Read", False), ("Edit", True)]
    assert every["total"] == 2 and changed["total"] == 1 and changed["results"] == every["results"][1:]
    (diff,) = changed["results"][0]["diffs"]
    expected = diffs.diff_lines({"file": APP, "old": OLD, "new": NEW})
    assert diff == {"file": APP, "diff": "\n".join(expected), "diff_lines": len(expected), "diff_cut": False}
    assert all("edits" not in call for call in every["results"])
    (whole,) = written["results"][0]["diffs"]
    assert whole["diff_cut"] is True and whole["diff_lines"] == len(WRITTEN.splitlines()) + 3
    assert len(whole["diff"].splitlines()) == diffs.DIFF_LINES


async def test_mcp_get_conversation_gives_edits_as_diffs(workspace):
    async with Client(mcp_tools.create_server(archive_path(workspace), workspace)) as client:
        answer = (
            await client.call_tool("get_conversation", {"document": str(session_id(workspace))})
        ).structured_content
    calls = {call["name"]: call for call in answer["messages"][1]["tool_calls"]}
    assert [item["file"] for item in calls["Edit"]["diffs"]] == [APP] and "edits" not in calls["Edit"]
    assert calls["Write"]["diffs"][0]["diff_cut"] is True
    assert '"prompt"' in calls["Task"]["input"] and "diffs" not in calls["Task"]
