"""A conversation read from an agent log, on its document page, through the real Datasette app.

Claude Code sessions are written from the published line format, indexed as a source of a
workspace, and read page by page as a person would: every link followed is read off the page.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import started_datasette, write_files
from test_browser import CHROMIUM, Visit
from test_web import serving

from archivist.archive.indexer import index_workspace
from archivist.queries.runner import Archive
from archivist.workspace import archive_path

PROJECT = "-home-ana-proj"
CWD = "/home/ana/proj"
SESSION = "7f3c2a10-5b1e-4c1a-9d2e-0a1b2c3d4e5f"
LONG_SESSION = "0b9d8c7e-1111-4a2b-8c3d-9e8f7a6b5c4d"
AGENT_ID = "b1c2d3e4"
SONNET = "claude-sonnet-4-5-20250929"
HAIKU = "claude-haiku-4-5-20251001"
LONG_OUTPUT = "\n".join(f"line {n}: Liveness probe failed: HTTP probe failed with statuscode: 500" for n in range(200))
EVIL = "Look at this: <script>alert('x')</script> <img src=x onerror=alert(1)> and [click](javascript:alert(1))"


# --- Claude Code lines ----------------------------------------------------------------------


def line(kind: str, uuid: str, parent: str | None, at: str, message: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": CWD,
        "sessionId": extra.pop("session", SESSION),
        "version": "2.0.49",
        "gitBranch": "fix/liveness-probe",
        "type": kind,
        "message": message,
        "uuid": uuid,
        "timestamp": at,
        **extra,
    }


def user(content: str | list[Any], uuid: str, parent: str | None, at: str, **extra: Any) -> dict[str, Any]:
    return line("user", uuid, parent, at, {"role": "user", "content": content}, **extra)


def assistant(
    blocks: list[dict[str, Any]], uuid: str, parent: str | None, at: str, model: str = SONNET, **extra: Any
) -> dict[str, Any]:
    message = {"id": f"msg_{uuid}", "type": "message", "role": "assistant", "model": model, "content": blocks}
    return line("assistant", uuid, parent, at, message, **extra)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(call_id: str, name: str, **inputs: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": inputs}


def tool_result(call_id: str, output: str, uuid: str, parent: str | None, at: str, **extra: Any) -> dict[str, Any]:
    return user([{"tool_use_id": call_id, "type": "tool_result", "content": output}], uuid, parent, at, **extra)


SESSION_LINES = [
    user("Why does the **api** pod keep restarting?", "u1", None, "2025-11-23T04:53:42.362Z"),
    assistant(
        [
            {
                "type": "thinking",
                "thinking": "The liveness probe may be failing before the app is up.",
                "signature": "E",
            },
            text("Let me look at the pod and its probe."),
            tool_use("toolu_1", "Bash", command="kubectl describe pod api -n prod", description="Describe the pod"),
            tool_use("toolu_2", "Read", file_path="/home/ana/proj/deploy/api.yaml"),
        ],
        "a1",
        "u1",
        "2025-11-23T04:53:45.100Z",
    ),
    tool_result("toolu_1", LONG_OUTPUT, "u2", "a1", "2025-11-23T04:53:47.000Z"),
    assistant(
        [
            text("The probe hits `/healthz` after **1 s**; the app needs 20 s to start."),
            tool_use("toolu_3", "Edit", file_path="/home/ana/proj/deploy/api.yaml", old_string="1", new_string="30"),
            tool_use("toolu_4", "Task", description="Check the other services", prompt="Check every probe"),
        ],
        "a2",
        "u2",
        "2025-11-23T04:54:10.000Z",
    ),
    tool_result(
        "toolu_4",
        f"Two services checked.\nagentId: {AGENT_ID}",
        "u3",
        "a2",
        "2025-11-23T04:56:00.000Z",
        toolUseResult={"status": "completed", "agentId": AGENT_ID},
    ),
    user(EVIL, "u4", "u3", "2025-11-23T04:57:00.000Z"),
    assistant([text("That is only text here.")], "a3", "u4", "2025-11-23T04:57:05.000Z"),
]

AGENT_LINES = [
    user("Check every probe", "s1", None, "2025-11-23T04:54:11.000Z", isSidechain=True, agentId=AGENT_ID),
    assistant(
        [tool_use("toolu_9", "Grep", pattern="livenessProbe", path="/home/ana/proj/deploy")],
        "s2",
        "s1",
        "2025-11-23T04:54:20.000Z",
        model=HAIKU,
        isSidechain=True,
        agentId=AGENT_ID,
    ),
    assistant([text("Two services checked.")], "s3", "s2", "2025-11-23T04:55:50.000Z", model=HAIKU, isSidechain=True),
]


def long_session(count: int) -> list[dict[str, Any]]:
    """A session of ``count`` messages, a user's and the assistant's in turn, a minute apart."""
    lines = []
    for n in range(count):
        at = f"2025-11-24T{10 + n // 60:02d}:{n % 60:02d}:00.000Z"
        parent = f"l{n - 1}" if n else None
        if n % 2 == 0:
            lines.append(user(f"question number {n}", f"l{n}", parent, at, session=LONG_SESSION))
        else:
            lines.append(assistant([text(f"answer number {n}")], f"l{n}", parent, at, session=LONG_SESSION))
    return lines


def jsonl(lines: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(item) + "\n" for item in lines)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """A workspace with one markdown conversation, indexed with a Claude Code source of three sessions."""
    root = tmp_path_factory.mktemp("conversation-page")
    workspace = write_files(
        root / "workspace",
        {
            "conversations/2025-11-20/001-debug-probes/conversation.md": "# Debugging probes\n\n## User\n\n"
            "Why do probes fail?\n\n## Assistant\n\nCheck `initialDelaySeconds`.\n",
        },
    )
    projects = write_files(
        root / "claude" / "projects",
        {
            f"{PROJECT}/{SESSION}.jsonl": jsonl(SESSION_LINES),
            f"{PROJECT}/{SESSION}/subagents/agent-{AGENT_ID}.jsonl": jsonl(AGENT_LINES),
            f"{PROJECT}/{LONG_SESSION}.jsonl": jsonl(long_session(450)),
        },
    )
    index_workspace(workspace, log_sources=[("claude-code", projects)])
    return workspace


@pytest.fixture
async def datasette(workspace: Path):
    return await started_datasette(archive_path(workspace))


def document_id(workspace: Path, path: str) -> int:
    with Archive.for_workspace(workspace) as archive:
        return archive.run("find_document", {"document": path})[0]["id"]


def main_session(workspace: Path) -> int:
    return document_id(workspace, f"claude-code:{PROJECT}/{SESSION}")


def long_session_id(workspace: Path) -> int:
    return document_id(workspace, f"claude-code:{PROJECT}/{LONG_SESSION}")


async def page_of(datasette, url: str, status: int = 200) -> str:
    response = await datasette.client.get(url)
    assert response.status_code == status, (url, response.text[:1000])
    return response.text


def messages(page: str) -> dict[int, str]:
    """Each message of a page: its number and its HTML."""
    found = re.findall(r'(<article class="archivist-message [^"]*" id="m(\d+)".*?</article>)', page, re.S)
    return {int(seq): block for block, seq in found}


def meta(page: str) -> dict[str, str]:
    """The header of a document page: each label and its text."""
    block = re.search(r'<dl class="archivist-meta">(.*?)</dl>', page, re.S)[1]
    return {
        label: " ".join(re.sub(r"<[^>]+>", " ", html.unescape(value)).split())
        for label, value in re.findall(r"<dt>(.*?)</dt>\s*<dd[^>]*>(.*?)</dd>", block, re.S)
    }


def link(page: str, text: str) -> str:
    found = re.search(rf'<a [^>]*href="([^"]+)"[^>]*>{re.escape(text)}</a>', page)
    assert found, f"no link {text!r}"
    return html.unescape(found[1])


def details(block: str) -> list[tuple[str, str, str]]:
    """The folds of a message: (class, opening tag, summary text)."""
    found = re.findall(r'(<details class="([\w-]+)"[^>]*>)\s*<summary>(.*?)</summary>', block, re.S)
    return [
        (name, tag, " ".join(html.unescape(re.sub(r"<[^>]+>", " ", summary)).split())) for tag, name, summary in found
    ]


# --- one session ------------------------------------------------------------------------------


async def test_a_session_shows_its_header_and_its_messages_in_order(datasette, workspace):
    page = await page_of(datasette, f"/document/{main_session(workspace)}")
    header = meta(page)
    assert header["Agent"] == "claude-code"
    assert header["Project"] == f"proj {CWD}"  # shown by name, the full path beside it
    assert header["Model"] == SONNET and header["Branch"] == "fix/liveness-probe"
    assert header["Time"] == "2025-11-23 04:53:42 – 04:57:05 UTC" and header["Messages"] == "7"
    assert "Sub-agent of" not in header
    shown = messages(page)
    assert list(shown) == list(range(7))
    roles = [re.search(r'data-role="(\w+)"', block)[1] for block in shown.values()]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "user", "assistant"]
    for seq, block in shown.items():  # each styled by its role, with its own link
        assert f'class="archivist-message role-{roles[seq]}' in block
        assert f'href="/document/{main_session(workspace)}?m={seq}#m{seq}"' in block
    first, answer = shown[0], shown[1]
    assert re.search(r'<time datetime="2025-11-23T04:53:42[.\dZ]*"[^>]*>2025-11-23 04:53:42</time>', first)
    assert ">04:53:45</time>" in answer  # the same day: the time alone
    assert f'<span class="archivist-model">{SONNET}</span>' in answer
    assert "<strong>api</strong>" in first  # the text is markdown
    assert "<code>/healthz</code>" in shown[3] and "<strong>1 s</strong>" in shown[3]
    assert 'class="archivist-body"' not in page  # the messages are the body


async def test_thinking_tool_calls_and_tool_output_are_closed_folds(datasette, workspace):
    shown = messages(await page_of(datasette, f"/document/{main_session(workspace)}"))
    folds = details(shown[1])
    assert [name for name, _, _ in folds] == ["archivist-thinking", "archivist-tool-call", "archivist-tool-call"]
    assert all(" open" not in tag for _, tag, _ in folds)
    assert folds[0][2] == "Thinking 55 characters"
    assert "The liveness probe may be failing before the app is up." in shown[1]
    # the files and commands of a call are on its summary line, seen without opening it
    assert folds[1][2] == "Bash kubectl describe pod api -n prod"
    assert folds[2][2] == "Read /home/ana/proj/deploy/api.yaml"
    assert [summary for _, _, summary in details(shown[3])] == ["Edit /home/ana/proj/deploy/api.yaml", "Task"]
    # the thinking comes before the text, the calls after it
    assert shown[1].index("archivist-thinking") < shown[1].index("Let me look") < shown[1].index("archivist-tool-call")
    # raw tool output: folded, cut to a sane length with a note and a link to all of it
    ((name, tag, summary),) = details(shown[2])
    assert name == "archivist-tool-output" and " open" not in tag
    assert summary == f"Tool output {len(LONG_OUTPUT):,} characters"
    output = re.search(r"<pre>(.*?)</pre>", shown[2], re.S)[1]
    assert output.startswith("line 0: Liveness probe failed") and len(output) < len(LONG_OUTPUT)
    assert f"shown: the first {len(output):,} of {len(LONG_OUTPUT):,} characters" in shown[2]
    whole = link(shown[2], "the whole output")
    row = await datasette.client.get(whole)
    assert row.status_code == 200 and html.escape(LONG_OUTPUT, quote=False) in row.text
    message_id = whole.rsplit("/", 1)[-1]
    texts = await datasette.client.get(f"/archive/message_texts.json?id={message_id}&_shape=array")
    assert texts.status_code == 200 and texts.json()[0]["tool_output"] == LONG_OUTPUT


async def test_raw_html_in_a_message_is_shown_as_text(datasette, workspace):
    block = messages(await page_of(datasette, f"/document/{main_session(workspace)}"))[5]
    assert "<script" not in block and "<img" not in block and 'href="javascript' not in block
    assert "&lt;script&gt;alert(" in block and "&lt;img src=x onerror=alert(1)&gt;" in block


async def test_a_sub_agent_links_to_the_session_it_belongs_to(datasette, workspace):
    sub = document_id(workspace, f"claude-code:{PROJECT}/{SESSION}/agent-{AGENT_ID}")
    page = await page_of(datasette, f"/document/{sub}")
    header = meta(page)
    assert header["Model"] == HAIKU and header["Messages"] == "3"
    parent = link(page, "Why does the **api** pod keep restarting?")  # the parent's title
    assert parent == f"/document/{main_session(workspace)}"
    assert "Sub-agent of" in header
    assert 'data-tool="Grep"' in page and "/home/ana/proj/deploy</code>" in page
    assert meta(await page_of(datasette, parent))["Agent"] == "claude-code"


async def test_a_session_lists_its_sub_agents_with_their_messages(datasette, workspace):
    sub = document_id(workspace, f"claude-code:{PROJECT}/{SESSION}/agent-{AGENT_ID}")
    page = await page_of(datasette, f"/document/{main_session(workspace)}")
    tree = re.search(r'<ul class="archivist-subagent-tree">(.*?)</ul>', page, re.S)[1]
    entries = re.findall(
        r'<li data-document="(\d+)"><a href="([^"]+)">([^<]+)</a> <span class="archivist-note">([^<]+)</span>', tree
    )
    assert [(int(found), href, note) for found, href, _, note in entries] == [(sub, f"/document/{sub}", "3 messages")]
    assert 'class="archivist-subagent-tree"' not in await page_of(datasette, f"/document/{sub}")


# --- a long session -----------------------------------------------------------------------------


async def test_a_task_call_links_to_the_sub_agent_session_it_started(tmp_path: Path) -> None:
    from conftest import sample_source

    workspace = write_files(tmp_path / "ws", {"notes/a.md": "# A\n\nalpha\n"})
    index_workspace(workspace, log_sources=[("claude-code", sample_source("claude-code"))])
    datasette = await started_datasette(archive_path(workspace))
    with Archive.for_workspace(workspace) as archive:
        rows = archive.run("list_conversations", {"agents": "claude-code"})
    parent = next(row for row in rows if row["parent"] is None)
    sub = next(row for row in rows if row["parent"] is not None)
    page = await page_of(datasette, f"/document/{parent['id']}")
    found = re.search(r'<p class="archivist-subagent">Sub-agent: <a href="([^"]+)">([^<]+)</a>', page)
    assert found and found[1] == f"/document/{sub['id']}" and html.unescape(found[2]) == sub["title"]
    # and the sub-agent's page names its parent
    assert meta(await page_of(datasette, found[1]))["Sub-agent of"] == parent["title"]


async def test_a_long_session_is_read_a_page_at_a_time(datasette, workspace):
    long_id = long_session_id(workspace)
    first = await page_of(datasette, f"/document/{long_id}")
    assert meta(first)["Messages"] == "450"
    assert list(messages(first)) == list(range(200))
    assert "Messages #0–#199 of 450 · page 1 of 3" in first
    second = await page_of(datasette, link(first, "Next →"))
    assert list(messages(second)) == list(range(200, 400))
    assert "answer number 201" in messages(second)[201]
    third = await page_of(datasette, link(second, "Next →"))
    assert list(messages(third)) == list(range(400, 450)) and "Next →" not in third
    assert await page_of(datasette, link(third, "← Previous")) == second
    assert await page_of(datasette, link(third, "1")) == first


async def test_a_message_link_lands_on_the_page_that_holds_it(datasette, workspace):
    long_id = long_session_id(workspace)
    page = await page_of(datasette, f"/document/{long_id}?m=300")
    shown = messages(page)
    assert list(shown) == list(range(200, 400))
    assert 'class="archivist-message role-user archivist-selected" id="m300"' in page
    assert [seq for seq, block in shown.items() if "archivist-selected" in block] == [300]
    assert len(re.findall(r'id="m300"', page)) == 1
    # a link by its fragment alone (as search hits link) reaches page 1: the anchor there links on
    first = await page_of(datasette, f"/document/{long_id}")
    anchor = re.search(r'<a id="m300" href="([^"]+)">300</a>', first)
    assert anchor and html.unescape(anchor[1]) == f"/document/{long_id}?m=300#m300"
    ids = re.findall(r'\bid="m(\d+)"', first)
    assert sorted(map(int, ids)) == list(range(450)) and len(ids) == len(set(ids))  # one of each
    assert "archivist-elsewhere" not in page  # a page reached by ?m= or ?page= has only its own
    # a message on page 1: ?m= shows page 1, the message marked
    assert 'class="archivist-message role-assistant archivist-selected" id="m7"' in (
        await page_of(datasette, f"/document/{long_id}?m=7")
    )


@pytest.mark.parametrize("query", ["page=4", "page=0", "page=two", "m=450", "m=-1", "m=x", "m=%C2%B2"])
async def test_a_page_or_message_that_is_not_there_is_a_clear_error(datasette, workspace, query):
    page = await page_of(datasette, f"/document/{long_session_id(workspace)}?{query}", status=400)
    assert 'data-code="INVALID_PARAMETER"' in page
    assert "pages 1 to 3" in page or "0 to 449" in page


# --- everything else ----------------------------------------------------------------------------


async def test_a_markdown_conversation_renders_as_before(datasette, workspace):
    found = document_id(workspace, "conversations/2025-11-20/001-debug-probes")
    page = await page_of(datasette, f"/document/{found}?page=7")  # no pages: the parameter means nothing
    assert '<article class="archivist-body"><h1>Debugging probes</h1>' in page
    assert "<code>initialDelaySeconds</code>" in page and "archivist-message" not in page
    assert meta(page)["Type"] == "debug" and "Agent" not in meta(page)


async def test_the_conversation_pages_load_nothing_from_elsewhere(datasette, workspace):
    for url in (f"/document/{main_session(workspace)}", f"/document/{long_session_id(workspace)}?m=300"):
        page = await page_of(datasette, url)
        loaded = re.findall(r'<(?:script|img|iframe|audio|video|source|embed)[^>]* src="([^"]*)"', page)
        loaded += re.findall(r'<link[^>]* href="([^"]*)"', page)
        loaded += re.findall(r"url\(([^)]*)\)", page)
        assert loaded, url
        assert all(item.startswith("/") and not item.startswith("//") for item in loaded), (url, loaded)


# --- in a browser -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def chromium():
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium and chromium-driver packages")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield browser
        browser.close()


@pytest.mark.parametrize("javascript", [True, False], ids=["javascript", "no-javascript"])
def test_a_message_link_scrolls_to_the_message_and_marks_it(chromium, workspace, javascript):
    long_id = long_session_id(workspace)
    with serving(workspace) as base:
        visit = Visit(chromium, base, javascript=javascript)
        page = visit.page
        page.goto(f"{base}/document/{long_id}#m150")
        target = page.locator("#m150")
        assert target.evaluate("element => element.matches(':target')")
        assert target.is_visible() and target.evaluate("element => element.getBoundingClientRect().top") < 200
        marked = target.evaluate("element => getComputedStyle(element).outlineStyle")
        assert marked == "solid" and page.locator("#m151").evaluate("e => getComputedStyle(e).outlineStyle") == "none"
        assert page.locator("details[open]").count() == 0  # every fold starts closed
        assert page.locator("#m151 .archivist-role").inner_text().lower() == "assistant"

        # a message on a later page, by its fragment alone: its anchor says so and links on
        page.goto(f"{base}/document/{long_id}#m300")
        notice = page.locator("#m300")
        assert notice.is_visible() and "later page" in notice.evaluate("e => getComputedStyle(e, '::after').content")
        assert page.locator(".archivist-elsewhere a:visible").count() == 1
        notice.click()
        page.wait_for_url(f"**/document/{long_id}?m=300#m300")
        assert page.locator("#m300").evaluate("element => element.matches(':target')")
        assert page.locator("#m300").is_visible()
        assert page.locator("#m300").evaluate("element => element.getBoundingClientRect().top") < 200
        assert page.locator(".archivist-message").count() == 200

        # a tool call's files and commands show on its closed fold
        page.goto(f"{base}/document/{main_session(workspace)}")
        call = page.locator("#m1 details.archivist-tool-call").first
        assert "kubectl describe pod api -n prod" in call.locator("summary").inner_text()
        assert not call.evaluate("element => element.open")
        visit.shot(f"conversation-{'js' if javascript else 'no-js'}")
        visit.close()
