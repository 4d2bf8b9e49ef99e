"""The sign-in page: a browser that comes to a closed server without its token gets a page that says
what is closed, how to open it and why; JSON clients keep the JSON error. Requests go through the
served app as `archivist serve` wraps it (Datasette on an indexed sample, behind the token guard)."""

from __future__ import annotations

import contextlib
import html
import re
import subprocess
import sys

import httpx
import pytest
from test_browser import browser as chromium  # noqa: F401 (a fixture)
from test_web import WITHOUT_TOKEN, _free_port, printed_url, wait_for_port

from archivist.web.guard import content_security_policy, guarded

TOKEN = "s3cret-token-of-this-run"
BASE = "http://127.0.0.1:8001"
PAGE = {"accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}  # a browser's navigation
HOSTILE = '"><script>alert(1)</script><img src=x onerror=alert(2)>'


@pytest.fixture
async def browser(sample_datasette):
    """A client on the guarded app that sends what a browser's navigation sends, and keeps cookies."""
    app = guarded(sample_datasette.app(), token=TOKEN)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=BASE, headers=PAGE) as client:
        yield client


def form_of(page: str) -> tuple[str, list[tuple[str, str]]]:
    """The sign-in form's action and its hidden fields (names and values, unescaped)."""
    action = re.search(r'<form method="get" action="([^"]*)"', page)
    assert action, page
    hidden = re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)">', page)
    return html.unescape(action[1]), [(html.unescape(name), html.unescape(value)) for name, value in hidden]


async def test_a_browser_without_the_token_gets_a_page_that_says_how_to_open_the_server(browser):
    for path in ("/", "/search?query=proxy&mode=keyword", "/archive/documents", "/document/1", "/nope"):
        refused = await browser.get(path)
        assert refused.status_code == 401, path
        assert refused.headers["content-type"].startswith("text/html"), path
        assert refused.headers["www-authenticate"] == "Bearer" and refused.headers["cache-control"] == "no-store"
        page = refused.text
        assert "This Archivist server is closed" in page
        assert f"{BASE}/?token=" in page and "paste the token" in page  # how to open it
        assert "private files" in page  # and why
        assert "not this server's" not in page  # no token was given, so none was wrong
        assert TOKEN not in page and TOKEN not in str(refused.headers)


async def test_the_page_runs_no_script_and_carries_the_policy(browser):
    refused = await browser.get("/")
    assert "<script" not in refused.text.lower()
    assert not re.search(r"<[^>]+\son\w+=", refused.text)  # no inline handlers either
    assert refused.headers["content-security-policy"] == content_security_policy()
    policy = dict(part.strip().split(" ", 1) for part in refused.headers["content-security-policy"].split(";"))
    assert policy["script-src"] == "'self'" and policy["form-action"] == "'self'"


async def test_json_clients_keep_the_json_error(browser):
    json = {"accept": "application/json"}
    for path, headers in (
        ("/", json),
        ("/", {"accept": "*/*"}),
        ("/", {"accept": ""}),
        ("/api/search?query=proxy&mode=keyword", PAGE),
        ("/archive/documents.json", PAGE),
        ("/-/mcp", PAGE),
        ("/search", {"accept": "application/json, text/html"}),
    ):
        refused = await browser.get(path, headers=headers)
        assert refused.status_code == 401, (path, headers)
        assert refused.headers["content-type"].startswith("application/json"), (path, headers)
        body = refused.json()
        assert body["success"] is False and body["code"] == "UNAUTHORIZED" and "token" in body["error"]
    posted = await browser.post("/", headers=PAGE, data={"token": TOKEN})  # only a page visit gets the page
    assert posted.status_code == 401 and posted.json()["code"] == "UNAUTHORIZED"


async def test_pasting_the_token_into_the_form_opens_the_page_that_was_asked_for(browser):
    refused = await browser.get("/search?query=proxy&mode=keyword")
    action, hidden = form_of(refused.text)
    assert action == "/search" and hidden == [("query", "proxy"), ("mode", "keyword")]
    sent = await browser.get(action, params=[*hidden, ("token", TOKEN)])  # what the form submits
    assert sent.status_code == 302 and sent.headers["location"] == "/search?query=proxy&mode=keyword"
    assert "HttpOnly" in sent.headers["set-cookie"] and "SameSite=Strict" in sent.headers["set-cookie"]
    opened = await browser.get(sent.headers["location"])
    assert opened.status_code == 200 and "proxy" in opened.text.lower()
    assert (await browser.get("/")).status_code == 200  # signed in for every page now


async def test_a_wrong_token_says_so_and_is_not_carried_on(browser):
    refused = await browser.get("/search", params={"query": "proxy", "token": "wrong"})
    assert refused.status_code == 401 and "not this server's" in refused.text
    assert form_of(refused.text) == ("/search", [("query", "proxy")])
    assert '"wrong"' not in refused.text  # the wrong token is nowhere in the page
    assert (await browser.get("/")).status_code == 401  # no cookie was set


async def test_hostile_paths_and_queries_are_never_reflected_unescaped(browser):
    query = [(HOSTILE, HOSTILE), ("ok", "ünïcode & more"), ("nul", "a\x00b"), ("token", HOSTILE)]
    refused = await browser.get("/" + HOSTILE, params=query, headers={**PAGE, "host": "127.0.0.1:8001"})
    page = refused.text
    assert refused.status_code == 401 and "<script>" not in page and "<img" not in page
    action, hidden = form_of(page)
    assert action.startswith("/") and not action.startswith("//") and "<" not in action and '"' not in action
    assert hidden == [(HOSTILE, HOSTILE), ("ok", "ünïcode & more")]  # carried exactly, the unprintable left out
    assert "not this server's" in page
    long = await browser.get("/search", params={"query": "x" * 20_000})
    assert long.status_code == 401 and form_of(long.text) == ("/search", [])  # too long to carry: left out


async def test_with_the_token_every_page_opens_as_before(browser):
    for path in ("/", "/search?query=proxy&mode=keyword", "/archive/documents"):
        opened = await browser.get(path, headers={**PAGE, "authorization": f"Bearer {TOKEN}"})
        assert opened.status_code == 200, path
        assert "This Archivist server is closed" not in opened.text


@contextlib.contextmanager
def serving_on(workspace, port: int):
    """`archivist serve WORKSPACE --no-index` on PORT, with a new token: the URL it printed, while it runs."""
    command = [sys.executable, "-c", "from archivist.cli import cli; cli()", "serve", str(workspace), "--no-index"]
    process = subprocess.Popen(
        [*command, "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=WITHOUT_TOKEN
    )
    try:
        printed = printed_url(process)
        wait_for_port(port)
        yield printed
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_a_tab_open_across_a_restart_shows_the_sign_in_page_and_the_pasted_token_opens_the_site(
    chromium,  # noqa: F811
    sample_workspace,
):
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    violations: list[str] = []
    try:
        page = context.new_page()
        page.on(
            "console", lambda message: violations.append(message.text) if "Content Security" in message.text else None
        )
        with serving_on(sample_workspace, port) as first:
            page.goto(first)
            assert page.url == base + "/"
            page.goto(base + "/search?query=proxy&mode=keyword")
            assert page.locator("h1", has_text="closed").count() == 0
        with serving_on(sample_workspace, port) as second:  # a new run: a new token, the old cookie is wrong
            page.reload()
            assert page.locator("h1").inner_text() == "This Archivist server is closed"
            assert page.url == base + "/search?query=proxy&mode=keyword"
            page.fill("input[name=token]", second.split("?token=", 1)[1])
            page.click("button[type=submit]")
            page.wait_for_load_state()
            assert page.url == base + "/search?query=proxy&mode=keyword"  # the token left the address bar
            assert page.locator("h1", has_text="closed").count() == 0
            assert "proxy" in page.content().lower()
    finally:
        context.close()
    assert not violations, violations
