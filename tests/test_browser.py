"""The pages in a real browser: Debian's Chromium, headless, driven by Playwright.

`archivist serve` runs in a subprocess on an embedded copy of the sample workspace; each
tab signs in by opening the URL it printed. Screenshots of each step are kept in
tests/artifacts/browser/.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ARTIFACTS
from test_web import serving

CHROMIUM = Path("/usr/bin/chromium")  # Debian's package; nothing here downloads a browser
SHOTS = ARTIFACTS / "browser"


@pytest.fixture(scope="module")
def server(embedded_sample, tmp_path_factory):
    workspace = tmp_path_factory.mktemp("browser") / "sample"
    shutil.copytree(embedded_sample, workspace)
    with serving(workspace) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium and chromium-driver packages")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield browser
        browser.close()


# Every Content-Security-Policy violation in a page, as the page itself hears of it.
HEAR_VIOLATIONS = """
window.cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  const seen = `${event.violatedDirective} ${event.blockedURI} ${event.sample}`;
  window.cspViolations.push(seen);
  window.reportViolation(seen);
});
"""


class Visit:
    """One browser tab on the server, signed in with the URL it printed, that records every URL the
    pages load and every Content-Security-Policy violation (the page's event, and the browser's console)."""

    def __init__(self, browser, server: str, javascript: bool = True) -> None:
        self.server = server
        self.context = browser.new_context(java_script_enabled=javascript, viewport={"width": 1280, "height": 900})
        self.violations: list[str] = []
        self.context.expose_function("reportViolation", lambda seen: self.violations.append(seen))
        self.context.add_init_script(HEAR_VIOLATIONS)
        self.page = self.context.new_page()
        self.page.set_default_timeout(90_000)  # the server loads the model on its first semantic query
        self.requests: list[str] = []
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("console", self._console)
        printed = getattr(server, "printed", None)  # the URL `archivist serve` printed, with its token
        if printed:
            self.page.goto(printed)  # the token becomes a cookie, and leaves the address bar
            assert self.page.url == server + "/", self.page.url

    def _console(self, message) -> None:
        if "Content Security Policy" in message.text:
            self.violations.append(message.text)

    def shot(self, name: str) -> None:
        SHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)

    def hits(self, selector: str = ".archivist-hit") -> list[str]:
        return self.page.locator(selector).all_inner_texts()

    def close(self) -> None:
        foreign = [url for url in self.requests if not url.startswith(self.server + "/")]
        self.context.close()
        assert not foreign, f"pages loaded from elsewhere: {foreign}"
        assert not self.violations, f"pages broke their Content-Security-Policy: {self.violations}"


def test_search_click_a_facet_open_a_document_follow_a_similar_one(browser, server):
    visit = Visit(browser, server)
    page = visit.page
    page.goto(server + "/search")
    page.fill("#query", "authentication")
    page.press("#query", "Enter")
    page.wait_for_url("**/search?query=authentication**")
    assert page.locator(".archivist-hit").count() == 10
    assert page.locator(".archivist-hit mark").count() > 0  # highlighted snippets
    assert page.locator(".archivist-timeline .bar").count() >= 2
    visit.shot("01-search")

    page.click('section[data-facet="kind"] a[data-value="conversation"]')
    page.wait_for_url("**entities=conversation**")
    assert set(visit.hits(".archivist-hit .badge.kind")) == {"conversation"}
    assert page.locator(".archivist-chip", has_text="kind: conversation").count() == 1
    visit.shot("02-facet")

    first = page.locator(".archivist-hit h3 a").first
    title = first.inner_text()
    first.click()
    page.wait_for_url("**/document/**")
    assert page.locator("section.content > h1").inner_text() == title
    assert page.locator(".archivist-body h2, .archivist-body h1").count() > 0  # rendered markdown
    similar = page.locator(".archivist-similar a")
    assert similar.count() == 8
    visit.shot("03-document")

    document_url = page.url
    target = similar.first.inner_text()
    similar.first.click()
    page.wait_for_url(lambda url: url != document_url and "/document/" in url)
    assert page.locator("section.content > h1").inner_text() == target
    assert page.locator(".archivist-similar a").count() == 8
    visit.shot("04-similar-document")
    visit.close()


def test_the_pages_show_results_with_javascript_off(browser, server):
    visit = Visit(browser, server, javascript=False)
    page = visit.page
    page.goto(server + "/search?query=proxy&mode=keyword")
    assert page.locator(".archivist-hit").count() == 10
    page.click('section[data-facet="kind"] a[data-value="memory"]')
    assert set(visit.hits(".archivist-hit .badge.kind")) == {"memory"}
    page.click('section[data-facet="month"] a[data-value="2025-10"]')
    assert page.locator('section[data-facet="day"]').count() == 1
    dates = visit.hits(".archivist-hit time")
    assert dates and all(date.startswith("2025-10") for date in dates)
    visit.shot("05-no-javascript-search")
    # the form submits without scripts too, within the filters chosen
    page.fill("#query", "winhttp")
    page.press("#query", "Enter")
    page.wait_for_url("**query=winhttp**")
    assert "entities=memory" in page.url and "start_date=2025-10" in page.url
    assert page.locator(".archivist-hit").count() == 1
    page.locator(".archivist-hit h3 a").first.click()
    page.wait_for_url("**/document/**")
    assert page.locator(".archivist-similar a").count() == 8
    visit.shot("06-no-javascript-document")
    visit.close()


def test_the_home_page_and_a_saved_query(browser, server):
    visit = Visit(browser, server)
    page = visit.page
    page.goto(server + "/")
    assert page.locator(".archivist-problems td", has_text="notes/whiteboard-photo.png").count() == 1
    assert "100%" in page.locator(".archivist-embeddings").inner_text()
    visit.shot("07-home")
    page.click('a[data-query="search_workspace"]')
    page.wait_for_url("**/archive/search_workspace?**")
    assert page.locator("table.rows-and-columns tbody tr").count() >= 1
    visit.shot("08-saved-query")
    page.goto(server + "/")
    page.click('.archivist-activity .bar[data-period="2025-11"]')
    page.wait_for_url("**start_date=2025-11&end_date=2025-11**")
    assert page.locator('section[data-facet="day"]').count() == 1
    visit.shot("09-a-month")
    visit.close()


def test_no_page_breaks_its_content_security_policy(browser, server):
    visit = Visit(browser, server)
    page = visit.page
    for path in (
        "/",
        "/search?query=authentication",
        "/document/1",
        "/archive/documents",  # Datasette's table page: its own scripts, the facet switch inline
        "/archive/search_workspace?query=proxy",  # a canned query: the SQL editor's inline script
        "/archive",
    ):
        response = page.goto(server + path)
        assert response.status == 200, path
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"], path
        assert page.evaluate("() => window.cspViolations") == [], path
        assert not visit.violations, (path, visit.violations)
    page.locator("details.nav-menu summary").click()  # Datasette's menu, closed again by its inline script
    page.locator("h1").first.click()
    assert not page.locator("details.nav-menu").evaluate("menu => menu.open")
    # and a script the policy does not name is refused, and heard of
    page.evaluate(
        "() => document.body.append(Object.assign(document.createElement('script'), {text: 'window.ran = 1'}))"
    )
    page.wait_for_function("() => window.cspViolations.length > 0")
    assert page.evaluate("() => window.ran") is None
    assert visit.violations
    visit.violations.clear()
    visit.close()
